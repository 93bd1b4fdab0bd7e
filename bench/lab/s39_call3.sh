#!/usr/bin/env bash
# Session 39, call 3-4 (H200, no build unless JK_NO_BUILD=0): float32 2048x512: XLA's kernel as our custom
# call, and bench/lab/s39_transpose_ptx_lab.cu's kernels (.dev/s39_transpose_lab.ptx, compiled on the CPU machine).
#   bash bench/lab/s39_call3.sh
. "$(dirname "$0")/norm_gpu_common.sh"
JK_NO_BUILD=${JK_NO_BUILD:-1} norm_gpu_start 590
echo "=== s39_xla_ptx_lab ($(left)s left)"
S39_LAB_PTX=$REPO/.dev/s39_transpose_lab.ptx XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( $(left) - 10 )) \
  python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" "$REPO/.dev/s39ptx.so" "${@:-t_f32_2048x512}" 2>&1 \
  | grep -vE "^(WARNING|I0000|W0000)" | tee "$OUT/s39_xla_ptx_lab.txt"
