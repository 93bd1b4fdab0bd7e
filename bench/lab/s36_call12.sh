#!/usr/bin/env bash
# Session 36, call 12 (H200): build ("wideasync": the 256x256 int8 tile loading through cp.async);
# bench/lab/s36_wideasync_lab.py.
#   bash bench/lab/s36_call12.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== wideasync lab ($(left)s left)"
timeout -k 5 240 python3 "$REPO/bench/lab/s36_wideasync_lab.py" >"$OUT/wideasync_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/wideasync_lab.log" | cut -c1-200 | tail -30
