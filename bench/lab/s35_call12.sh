#!/usr/bin/env bash
# Session 35, call 12 (H200): build (lab tokens rcin512x2 ... for the input-order row copy's shape);
# bench/lab/s35_rowin_lab.py.
#   bash bench/lab/s35_call12.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 400
export XLA_PYTHON_CLIENT_PREALLOCATE=false
timeout -k 5 220 python3 "$REPO/bench/lab/s35_rowin_lab.py" >"$OUT/rowin_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/rowin_lab.log" | cut -c1-200 | tail -40
