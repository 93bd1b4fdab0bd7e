#!/usr/bin/env bash
# Session 21, call 13 (H200): build (sm_90a), then bench/lab/s21_proj_lab.py (GPT-2-small projections by schedule).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-300}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
l=$(left)
echo "=== proj lab ($l s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s21_proj_lab.py" gpt \
  2>&1 | tee "$OUT/proj_lab.log" | grep -E "^\||device|FAILED|Error" | head -40
