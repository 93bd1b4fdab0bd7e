#!/usr/bin/env bash
# Session 36, call 10 (H200): build; bench/lab/s36_stats_lab.py (LayerNorm with and without return_stats over the
# benchmark's sweep).
#   bash bench/lab/s36_call10.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== stats lab ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s36_stats_lab.py" >"$OUT/stats_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/stats_lab.log" | cut -c1-200 | tail -40
