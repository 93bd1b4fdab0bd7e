#!/usr/bin/env bash
# Session 34, call 4 (H200): build; the row copy's CTA shapes (bench/lab/s34_rowcopy_lab.py).
#   bash bench/lab/s34_call4.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== row copy lab ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s34_rowcopy_lab.py" >"$OUT/rowcopy_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/rowcopy_lab.log" | cut -c1-200 | tail -50
