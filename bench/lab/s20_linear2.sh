#!/usr/bin/env bash
# Session 20, device call 8 (H200): build (sm_90a); bench/lab/s20_linear_lab.py's repeated cases (S20_LAB=repeat:
# the default, the 128x256 pairs sharing b and the ping-pong pairs, twice in alternating order). No tests: call 7
# ran them on this code.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
l=$(left)
echo "=== linear lab ($l s left)"
S20_LAB=repeat XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s20_linear_lab.py" \
  2>&1 | tee "$OUT/linear_lab.log" | grep -E "^\||device|FAILED|Error" | head -60
