#!/usr/bin/env bash
# Session 21, call 10 (H200): build (sm_90a), then bench/lab/s21_gpt_lab.py (the GPT-2-small forward's linear shapes).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-300}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
l=$(left)
echo "=== gpt lab ($l s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s21_gpt_lab.py" gpt \
  2>&1 | tee "$OUT/gpt_lab.log" | grep -E "^\||device|FAILED|Error" | head -30
