#!/usr/bin/env bash
# Session 31, call 5 (H200): build; the 16-bit long rows' scale in shared memory on the lean kernels
# (s31_lean_lab.py --more: default, plain, ss); then the prepared per-SASS stall sampling of the 32-column norms
# (s31_norm32_sass_stalls.sh) on the same build. Logs under $OUT.
#   JK_TOTAL_S=590 bash bench/lab/s31_call5.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== lab ($(left)s left)"
timeout -k 5 150 python3 "$REPO/bench/lab/s31_lean_lab.py" --more --dtypes bf16,f16 --n 65536 \
  --out "$OUT/s31_ss_lab.txt" 2>"$OUT/lab.err" | cut -c1-300
echo "lab rc=$?"; grep -E "Error|error" "$OUT/lab.err" | head -5
echo "=== sass stalls ($(left)s left)"
JK_NO_BUILD=1 JK_TOTAL_S=$(( $(left) - 5 )) bash "$REPO/bench/lab/s31_norm32_sass_stalls.sh"
