#!/usr/bin/env bash
# Session 15, device call 3 (H200): build (sm_90a); float32 rows of 32/64/128 columns now take the packed
# short-row tier by default: the norm row tests; the SkinnyPipe tests with the new 6- / 8-deep rings at 64
# columns; the short-row lab at float32 16-128 columns; the decode lab (s15_decode_lab.py).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== norm row tests, default dispatch ($(left)s left)"
timeout -k 5 120 python3 -m pytest -q -x -n 8 -p no:cacheprovider "$REPO/tests/test_norms.py" -k "row" 2>&1 | tail -2
echo "=== matmul pipe tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -x -n 8 -p no:cacheprovider "$REPO/tests/test_matmul.py" -k "pipe" 2>&1 | tail -2
l=$(left)
echo "=== norm lab ($l s left)"
timeout -k 5 150 python3 "$REPO/bench/lab/norm_short_lab.py" --cols 16,32,64,128 --dtypes f32 --budget 120 2>&1 \
  | tee "$OUT/norm_lab.log" | grep -E "^\||ceiling|Error" | head -30
l=$(left)
echo "=== decode lab ($l s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s15_decode_lab.py" \
  2>&1 | tee "$OUT/decode_lab.log" | grep -E "^\||device|FAILED|Error" | head -60
