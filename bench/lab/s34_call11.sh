#!/usr/bin/env bash
# Session 34, call 11 (H200): build with the transpose handler declared kCmdBufferCompatible; tests/test_transpose.py
# (the isolated handler-validation test: a rejected raw call, then a good one, in a child process) and
# tests/test_reliability.py -k command_buffers; the host lab with XLA's default flags (bench/lab/s34_host_lab.py).
#   bash bench/lab/s34_call11.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_transpose.py" \
  "$REPO/tests/test_reliability.py" >"$OUT/tests.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head
echo "=== host lab, default flags ($(left)s left)"
timeout -k 5 150 python3 "$REPO/bench/lab/s34_host_lab.py" >"$OUT/host_0.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000|E0000)" "$OUT/host_0.log" | cut -c1-200 | tail -10
