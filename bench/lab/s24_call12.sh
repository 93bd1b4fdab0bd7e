#!/usr/bin/env bash
# Session 24, call 12 (H200): the long-row norms with and without their parameter rows (s24_norm_params.py).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-300}
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer=
timeout -k 5 $(( $(left) - 5 )) python3 "$REPO/bench/lab/s24_norm_params.py" 2>&1 | grep -E "^\||device|Error"
