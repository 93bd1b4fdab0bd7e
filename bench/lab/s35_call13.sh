#!/usr/bin/env bash
# Session 35, call 13 (H200): build; bench/lab/s35_kernels_lab.py with S35_CHAINS_ONLY=1: 8 of our row copies /
# permutes / XLA's transposes / x * c back to back in one executable, CUPTI per kernel.
#   bash bench/lab/s35_call13.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 400
export XLA_PYTHON_CLIENT_PREALLOCATE=false
S35_CHAINS_ONLY=1 timeout -k 5 200 python3 "$REPO/bench/lab/s35_kernels_lab.py" >"$OUT/kernels_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/kernels_lab.log" | cut -c1-330 | tail -40
