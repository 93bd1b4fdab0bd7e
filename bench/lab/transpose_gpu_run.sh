#!/usr/bin/env bash
# One device call for the transpose work (fits 300 s): build (sm_90a only), the before/after timing of
# issue 5's cases (bench/lab/transpose_before_after.py: one process per JK_TRANSPOSE_TIERS setting),
# then tests/test_transpose.py (parallel workers, then the multi-GiB `large` cases alone) with the time
# left. Logs under $OUT; summaries printed last (the device tool returns only the output's tail).
#   run from the repo root: XLA_FFI_INCLUDE_DIR=... bash bench/lab/transpose_gpu_run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
export OUT=${OUT:-/tmp/jk_out} JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} PYTHONUNBUFFERED=1
mkdir -p "$OUT"
DEADLINE=${DEADLINE:-285}
start=$(date +%s)
left() { echo $(( DEADLINE - ($(date +%s) - start) )); }
bash bench/gpu_check.sh build || exit 1
echo "build done at $(( $(date +%s) - start ))s"
cd /tmp
timeout 150 python3 "$REPO/bench/lab/transpose_before_after.py" >"$OUT/before_after.log" 2>&1
echo "before/after rc=$? at $(( $(date +%s) - start ))s"
export XLA_PYTHON_CLIENT_PREALLOCATE=false
t=$(( $(left) - 35 )); [ $t -lt 30 ] && t=30
timeout $t python3 -m pytest -q -p no:cacheprovider -o addopts= -n 8 -m "not large" \
  "$REPO/tests/test_transpose.py" >"$OUT/tests.log" 2>&1
echo "tests rc=$? at $(( $(date +%s) - start ))s"
t=$(( $(left) )); [ $t -lt 15 ] && t=15
JK_LARGE_TESTS=1 timeout $t python3 -m pytest -q -p no:cacheprovider -o addopts= -m large \
  "$REPO/tests/test_transpose.py" >"$OUT/tests_large.log" 2>&1
echo "large tests rc=$? at $(( $(date +%s) - start ))s"
echo "== tests"; grep -E "^(FAILED|ERROR)|Error" "$OUT/tests.log" | head -12; tail -3 "$OUT/tests.log"
echo "== large tests"; grep -E "^(FAILED|ERROR)|Error" "$OUT/tests_large.log" | head -8; tail -3 "$OUT/tests_large.log"
echo "== before/after"; cat "$OUT/before_after.log" | tail -120
