#!/usr/bin/env bash
# Session 35, call 11 (H200): build; bench/lab/s35_kernels_lab.py (the kernels one call of ours launches and their
# CUPTI times against XLA's x * c; the same 8 to a jitted chain).
#   bash bench/lab/s35_call11.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 400
export XLA_PYTHON_CLIENT_PREALLOCATE=false
timeout -k 5 200 python3 "$REPO/bench/lab/s35_kernels_lab.py" >"$OUT/kernels_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/kernels_lab.log" | cut -c1-330 | tail -40
