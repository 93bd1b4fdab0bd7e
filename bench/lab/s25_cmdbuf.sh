#!/usr/bin/env bash
# Session 25, call 7 (H200): bench/lab/s25_cmdbuf.py with XLA's default flags, then with command buffers off.
# Log: $OUT/lab.log.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 300
export XLA_PYTHON_CLIENT_PREALLOCATE=false
{ timeout -k 5 90 python3 "$REPO/bench/lab/s25_cmdbuf.py"
  XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 90 python3 "$REPO/bench/lab/s25_cmdbuf.py"; } >"$OUT/lab.log" 2>&1
grep -E "^\||device|Error" "$OUT/lab.log" | cut -c1-220
