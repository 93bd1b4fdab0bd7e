#!/usr/bin/env bash
# Session 32, call 11 (H200): build; tests/test_norms.py -k window, then tests/test_softmax.py (the softmax window
# tier's default and forced rows among them) on the final code. Logs under $OUT.
#   bash bench/lab/s32_call11.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== norm window tests ($(left)s left)"
timeout -k 5 60 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_norms.py" -k window \
  >"$OUT/tests_norm_window.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_norm_window.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_norm_window.log" | head
echo "=== softmax tests ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_softmax.py" \
  >"$OUT/tests_softmax.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_softmax.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_softmax.log" | head
