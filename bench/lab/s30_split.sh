#!/usr/bin/env bash
# Session 30 (H200, one call): build, the strided norm tests on the GPU (the split-axis tier, the register tile's
# refactor), then bench/lab/s30_split_lab.py (split against the previous default and jnp). Logs under $OUT.
#   JK_TOTAL_S=560 bash bench/lab/s30_split.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 560
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 $(( $(left) / 2 )) python3 -m pytest -q -p no:cacheprovider -o addopts= -x -n 8 \
  "$REPO/tests/test_norm_strided.py" "$REPO/tests/test_softmax_columns.py" >"$OUT/tests_strided.log" 2>&1
echo "tests rc=$?"; tail -3 "$OUT/tests_strided.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_strided.log" | head
echo "=== lab ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s30_split_lab.py" --out "$OUT/s30_split_lab.txt" \
  2>"$OUT/lab.err" | cut -c1-260
echo "lab rc=$?"; grep -E "Error|error" "$OUT/lab.err" | head -5
