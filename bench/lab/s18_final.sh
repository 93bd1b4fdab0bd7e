#!/usr/bin/env bash
# Session 18, device call 3 (~400 s): build (sm_90a); the transpose tests (the compact big tile's order became a
# template argument after call 2's full suite); then the benchmark (bench/gpu_check.sh bench). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-588}
echo "=== transpose tests ($(left)s left)"
JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 200 python3 -m pytest -q -p no:cacheprovider \
  -o addopts= -n 8 "$REPO/tests/test_transpose.py" >"$OUT/tests_transpose.log" 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_transpose.log" | tail -8 | cut -c1-300
echo "=== bench ($(left)s left)"
OUT=$OUT timeout -k 5 $(( $(left) - 5 )) bash "$REPO/bench/gpu_check.sh" bench 2>&1 | grep -E "geomean|exit" | head -12
