#!/usr/bin/env bash
# Session 35, call 7 (H200): build (softmax's 16-bit window rows past 1024 packs: C = 6 or 8 by the rows resident per
# SM); the window tests; the window lab (the rule against C = 6 and 8) over 16-bit 12291-49139 columns.
#   bash bench/lab/s35_call7.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== window tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_softmax.py" -k window \
  >"$OUT/tests_window.log" 2>&1
echo "window rc=$?"; tail -1 "$OUT/tests_window.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_window.log" | head
echo "=== softmax window lab ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s33_softmax_window_lab.py" --out "$OUT/s35_window_lab3.txt" \
  --dtypes bfloat16,float16 --variants regs,c6,c8,jnp \
  --cases 24576x12291,16384x13007,16384x14339,16384x16891,16384x17501,12288x20483,12288x26003,8192x28003,8192x32765,8192x36003,8192x40963,8192x49139 \
  >"$OUT/window_lab3.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/window_lab3.log" | cut -c1-200 | tail -50
