#!/usr/bin/env bash
# Session 36, call 3 (H200): build ("wide" / "wide1k" tokens: 1-byte transposes on the 256x256 tile at any size with
# 2 waves of big tiles, 512 / 1024 threads); bench/lab/s36_wide_lab.py.
#   bash bench/lab/s36_call3.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== wide lab ($(left)s left)"
timeout -k 5 300 python3 "$REPO/bench/lab/s36_wide_lab.py" >"$OUT/wide_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/wide_lab.log" | cut -c1-200 | tail -40
