#!/usr/bin/env bash
# Session 36, call 9 (H200): build ("big128t": the compact int8 big tile with 128 threads); bench/lab/s36_big128t_lab.py.
#   bash bench/lab/s36_call9.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== big128t lab ($(left)s left)"
timeout -k 5 300 python3 "$REPO/bench/lab/s36_big128t_lab.py" >"$OUT/big128t_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/big128t_lab.log" | cut -c1-200 | tail -30
