#!/usr/bin/env bash
# Session 34, call 10 (H200): build; host time per op, ours against XLA's kernels (bench/lab/s34_host_lab.py), with
# XLA's default flags and with command buffers off.
#   bash bench/lab/s34_call10.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
for nocb in 0 1; do
  echo "=== host lab S34_NOCB=$nocb ($(left)s left)"
  S34_NOCB=$nocb timeout -k 5 150 python3 "$REPO/bench/lab/s34_host_lab.py" >"$OUT/host_$nocb.log" 2>&1
  echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000|E0000)" "$OUT/host_$nocb.log" | cut -c1-200 | tail -10
done
