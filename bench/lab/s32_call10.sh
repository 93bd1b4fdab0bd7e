#!/usr/bin/env bash
# Session 32, call 10 (H200): build; tests/test_softmax.py + tests/test_softmax_long.py (the softmax window tier's
# rows, forced and default, among them) and tests/test_norms.py -k window; the odd-row softmax lab, window against the
# scalar tiers (bench/lab/s32_odd_softmax_lab.py). Logs under $OUT.
#   bash bench/lab/s32_call10.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 200 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_softmax.py" \
  "$REPO/tests/test_softmax_long.py" >"$OUT/tests_softmax.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_softmax.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_softmax.log" | head
echo "=== odd softmax ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s32_odd_softmax_lab.py" --out "$OUT/s32_odd_softmax_lab2.txt" 2>&1 | tail -29
