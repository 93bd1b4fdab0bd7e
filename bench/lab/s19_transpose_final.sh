#!/usr/bin/env bash
# Session 19: build (sm_90a); tests/test_transpose.py (with the new narrow-side tests); the off-list shapes against
# jnp (bench/lab/s19_transpose_shapes.py); issue 5's cases (bench/lab/transpose_cases.py --no-ceiling). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-585}
echo "=== transpose tests ($(left)s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 240 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
  "$REPO/tests/test_transpose.py" >"$OUT/tests_transpose.log" 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_transpose.log" | tail -8 | cut -c1-300
l=$(left)
echo "=== shapes ($l s left)"
timeout -k 5 $(( l / 2 )) python3 "$REPO/bench/lab/s19_transpose_shapes.py" 2>&1 | tee "$OUT/transpose_shapes.txt" \
  | grep -E "^\||device|geomean|Error"
l=$(left)
echo "=== issue 5 cases ($l s left)"
timeout -k 5 $(( l - 5 )) python3 "$REPO/bench/lab/transpose_cases.py" --no-ceiling >"$OUT/transpose_cases.txt" 2>&1
echo "rc=$?"; grep -vE "^(ROW|WARNING|I0000|W0000)" "$OUT/transpose_cases.txt" | tail -25 | cut -c1-200
