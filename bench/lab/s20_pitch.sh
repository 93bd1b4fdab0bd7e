#!/usr/bin/env bash
# Session 20, device call 2 (H200): build (sm_90a), then bench/lab/s20_pitch_lab.py.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
l=$(left)
echo "=== pitch lab ($l s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s20_pitch_lab.py" \
  2>&1 | tee "$OUT/pitch_lab.log" | grep -E "^\||device|FAILED|Error" | head -80
