#!/usr/bin/env bash
# Session 11, device call 2 (~585 s): build (sm_90a); the benchmark (bench/gpu_check.sh bench); then the
# softmax and norm test files (the statistics' merges changed under every tier) with the time left. Logs under
# $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-585}
l=$(left)
echo "=== bench (${l}s left)"
OUT=$OUT timeout -k 5 200 bash "$REPO/bench/gpu_check.sh" bench 2>&1 | grep -E "geomean|exit" | head -12
l=$(left)
echo "=== softmax + norm tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 5 )) python3 -m pytest -q -n 12 -p no:cacheprovider \
  -o addopts= -m "not large" "$REPO/tests/test_softmax.py" "$REPO/tests/test_softmax_long.py" \
  "$REPO/tests/test_stats_apply.py" "$REPO/tests/test_softmax_columns.py" "$REPO/tests/test_norms.py" \
  "$REPO/tests/test_norm_strided.py" >"$OUT/tests_s11.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_s11.log" | tail -12 | cut -c1-300
