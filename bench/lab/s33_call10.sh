#!/usr/bin/env bash
# Session 33, call 10 (H200): build; tests/test_softmax.py + tests/test_softmax_long.py on the final code (the softmax
# window tier's 4-or-8 rule). Logs under $OUT.
#   bash bench/lab/s33_call10.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
cd /tmp
echo "=== softmax tests ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 -m "not large" \
  "$REPO/tests/test_softmax.py" "$REPO/tests/test_softmax_long.py" >"$OUT/tests_softmax.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_softmax.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_softmax.log" | head
