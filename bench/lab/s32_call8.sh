#!/usr/bin/env bash
# Session 32, call 8 (H200): build; bench/gpu_check.sh test-norm (the window tier's odd rows among them, with
# JK_NORM_WINDOW=0 for the scalar tiers before it); the window lab (bench/lab/s32_window_lab.py). Logs under $OUT.
#   bash bench/lab/s32_call8.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== test-norm ($(left)s left)"
mkdir -p "$OUT/norm" && cd "$REPO" && JK_TEST_WORKERS=16 JK_TEST_TIMEOUT=200 JK_LARGE_TESTS=0 OUT=$OUT/norm \
  bash bench/gpu_check.sh test-norm 2>&1 | tail -3; grep -E "^(FAILED|ERROR)" "$OUT/norm/tests.log" | head
echo "=== window lab ($(left)s left)"
cd /tmp && timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s32_window_lab.py" --out "$OUT/s32_window_lab.txt" 2>&1 | tail -40
