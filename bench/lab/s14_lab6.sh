#!/usr/bin/env bash
# As run (commit b7ea65f): the lab token "fastdiv" lost (bench/lab/s14_h200.md call 11) and was removed after this call.
# Session 14, device call 11 (H200): build (sm_90a); the transpose row-copy tests (the new lab token "fastdiv"
# among the knobs) and the whole transpose file; then bench/lab/transpose_s4.py (every issue-5 case, default
# against its lab tokens and jnp; the attention permute with "fastdiv"). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-300}
l=$(left)
echo "=== transpose tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false JK_LARGE_TESTS=0 timeout -k 5 90 python3 -m pytest -q -n 8 -p no:cacheprovider \
  -o addopts= -m "not large" "$REPO/tests/test_transpose.py" >"$OUT/tests_transpose.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_transpose.log" | tail -6 | cut -c1-300
l=$(left)
echo "=== transpose lab (${l}s left)"
timeout -k 5 $(( l - 5 )) python3 "$REPO/bench/lab/transpose_s4.py" >"$OUT/transpose_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/transpose_lab.log" | grep -E "0,2,1,3|geomean|Error|Trace|ceiling" \
  | cut -c1-200
