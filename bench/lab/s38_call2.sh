#!/usr/bin/env bash
# Session 38, call 2 (H200): build (grid3 on the padded compact tiles too; "rbl2" / "rbl8"); the session-38 token tests
# of tests/test_transpose.py; bench/lab/s38_lab2.py (grid3 against the default on every compact case).
#   bash bench/lab/s38_call2.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_transpose.py" \
  -k "session38 or small_cta or flavours" >"$OUT/tests_transpose.log" 2>&1
echo "transpose rc=$?"; tail -1 "$OUT/tests_transpose.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_transpose.log" | head
echo "=== s38 lab2 ($(left)s left)"
timeout -k 5 $(( $(left) - 5 )) python3 "$REPO/bench/lab/s38_lab2.py" >"$OUT/s38_lab2.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/s38_lab2.log" | cut -c1-160 | tail -90
