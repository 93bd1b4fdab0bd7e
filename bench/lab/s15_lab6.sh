#!/usr/bin/env bash
# Session 15, device call 14 (H200, a lab build: s15_pipe_lab_flag2.patch): SkinnyPipe's fixed costs
# (s15_decode_lab3.py). Information for the next session; nothing committed changes.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-300}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 120 python3 "$REPO/bench/lab/s15_decode_lab3.py" \
  2>&1 | tee "$OUT/decode_lab3.log" | grep -E "^\||device|FAILED|Error" | head -30
