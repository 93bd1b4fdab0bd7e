#!/usr/bin/env bash
# One device call (<= 300 s), session 3 round 2: build, the variants table (default vs the round-2
# candidates vs jnp, bench/lab/transpose_variants.py), XLA's launch geometry for 2048x512 (ncu + PTX dump,
# bench/lab/transpose_xla_geometry.py), after tests/test_transpose.py, with the time left. Logs in $OUT.
#   run from the repo root: XLA_FFI_INCLUDE_DIR=... bash bench/lab/transpose_round2_run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
export OUT=${OUT:-/tmp/jk_out} JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} PYTHONUNBUFFERED=1
mkdir -p "$OUT"
start=$(date +%s)
el() { echo $(( $(date +%s) - start )); }
bash bench/gpu_check.sh build >"$OUT/build_stage.log" 2>&1 || { tail -40 "$OUT/build_stage.log"; exit 1; }
echo "build done at $(el)s"
cd /tmp
export XLA_PYTHON_CLIENT_PREALLOCATE=false
t=${VARIANTS_S:-130}
timeout $(( t + 10 )) python3 "$REPO/bench/lab/transpose_variants.py" $t >"$OUT/variants.log" 2>&1
echo "variants rc=$? at $(el)s"
echo "== variants"; tail -42 "$OUT/variants.log"
timeout ${TESTS_S:-70} python3 -m pytest -q -x -n 8 -p no:cacheprovider -o addopts= -m "not large" \
  "$REPO/tests/test_transpose.py" >"$OUT/tests.log" 2>&1
echo "tests rc=$? at $(el)s"; tail -3 "$OUT/tests.log"
g=$(( ${TOTAL_S:-292} - $(el) )); [ $g -lt 15 ] && g=15
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
XLA_FLAGS="--xla_dump_to=$OUT/xla_dump --xla_dump_hlo_as_text" timeout $g ${NCU:-ncu} \
  --kernel-name regex:'transpose|Tiled|Register|negate' --section LaunchStats --launch-count 30 \
  python3 "$REPO/bench/lab/transpose_xla_geometry.py" "$OUT/xla_dump" >"$OUT/geometry.log" 2>&1
echo "geometry rc=$? at $(el)s"
echo "== geometry"
grep -E "^  [A-Za-z_].*\([0-9]+, [0-9]+, [0-9]+\)x\(|Registers Per Thread|Shared Memory Configuration Size|Static Shared|Dynamic Shared|Duration|^==|^   |ERR|rror" "$OUT/geometry.log" | head -90
