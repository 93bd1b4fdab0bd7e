#!/usr/bin/env bash
# Session 4's one device call (<= 300 s): build the package (and the numbered lab program alongside),
# bench/lab/transpose_s4.py (every JK_TRANSPOSE_TIERS candidate against the default and jnp, one process),
# the numbered lab (bench/lab/transpose_lab.cu), then the transpose tests covering the new tiers and knobs.
# Logs in $OUT; the summaries are printed last (the device tool returns only the output's tail).
#   run from the repo root: bash bench/lab/transpose_s4_run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
export OUT=${OUT:-/tmp/jk_out} JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} PYTHONUNBUFFERED=1
mkdir -p "$OUT"
start=$(date +%s)
el() { echo $(( $(date +%s) - start )); }
nvcc -O3 -std=c++17 -arch=sm_90a -Icuda bench/lab/transpose_lab.cu -o /tmp/tlab >"$OUT/lab_build.log" 2>&1 &
NV=$!
bash bench/gpu_check.sh build >"$OUT/build_stage.log" 2>&1 || { tail -40 "$OUT/build_stage.log"; exit 1; }
echo "build done at $(el)s"
cd /tmp
export XLA_PYTHON_CLIENT_PREALLOCATE=false
timeout ${S4_S:-130} python3 "$REPO/bench/lab/transpose_s4.py" >"$OUT/s4.log" 2>&1
echo "s4 rc=$? at $(el)s"
wait $NV && timeout 30 /tmp/tlab >"$OUT/lab.log" 2>&1; echo "lab rc=$? at $(el)s"
g=$(( ${TOTAL_S:-290} - $(el) )); [ $g -lt 20 ] && g=20
timeout $g python3 -m pytest -q -x -n 8 -p no:cacheprovider -o addopts= -m "not large" \
  -k "small_cta or row_copy_knobs or int8_past_32mib or tiled_flavours or 2d_sizes or misaligned or every_dtype" \
  "$REPO/tests/test_transpose.py" >"$OUT/tests.log" 2>&1
echo "tests rc=$? at $(el)s"; grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head -8; tail -2 "$OUT/tests.log"
echo "== lab"; grep -vE "^  vec16|^sweep|^  padded" "$OUT/lab.log" | head -14
echo "== s4"; cat "$OUT/s4.log" | grep -v "^device" | tail -75
