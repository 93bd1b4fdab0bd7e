#!/usr/bin/env bash
# Session 34, call 6 (H200): build (PDL, JK_NORM_NC and the fast division reverted; the 16-byte row copy at 256 x 2;
# softmax's register window with 5 and 6 packs a thread); tests/test_transpose.py; the softmax window tests as built
# and with 5 / 6 packs a thread forced; the row copy lab (default against rc256x4 / rc128x2); the softmax window lab
# over C = 4 / 5 / 6 / 8.
#   bash bench/lab/s34_call6.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 100 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_transpose.py" \
  >"$OUT/tests_transpose.log" 2>&1
echo "transpose rc=$?"; tail -1 "$OUT/tests_transpose.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_transpose.log" | head
for c in "" 5 6; do
  JK_SOFTMAX_WINDOW_C=$c timeout -k 5 100 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 \
    "$REPO/tests/test_softmax.py" -k window >"$OUT/tests_window_$c.log" 2>&1
  echo "window C=${c:-rule} rc=$?"; tail -1 "$OUT/tests_window_$c.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_window_$c.log" | head
done
echo "=== row copy lab ($(left)s left)"
S34_CALL=6 timeout -k 5 120 python3 "$REPO/bench/lab/s34_rowcopy_lab.py" >"$OUT/rowcopy_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/rowcopy_lab.log" | cut -c1-200 | tail -22
echo "=== softmax window lab ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s33_softmax_window_lab.py" --out "$OUT/s34_window_lab.txt" \
  --more --dtypes bfloat16,float32 --cols 1537,2051,3075,4099,6147,8195,12291 --variants regs,c4,c5,c6,c8,jnp \
  >"$OUT/window_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/window_lab.log" | cut -c1-330 | tail -32
