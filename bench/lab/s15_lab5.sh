#!/usr/bin/env bash
# Session 15, device calls 9 and 10 (H200; call 10: TMA the default where b is larger than L2): build (sm_90a); SkinnyPipe with b's stages through TMA (JK_MATMUL_PIPE_TMA=1):
# the SkinnyPipe tests (the tma variants among them), then the decode lab.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-400}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== matmul pipe tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -x -n 8 -p no:cacheprovider "$REPO/tests/test_matmul.py" -k "pipe" 2>&1 | tail -15 | cut -c1-300
l=$(left)
echo "=== decode lab ($l s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s15_decode_lab.py" \
  2>&1 | tee "$OUT/decode_lab.log" | grep -E "^\||device|FAILED|Error" | head -40
