#!/usr/bin/env bash
# Session 39, call 9 (H200): build; LayerNorm at 49152 x 32 (16-bit): ours, jnp, XLA's Triton kernel as our custom call
# (its operands in the fusion's order) and bench/lab/s39_norm_ptx_lab.cu's kernels in the Triton fusion's layout
# (.dev/s39_norm_lab.ptx, compiled on the CPU machine).
#   bash bench/lab/s39_call9.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
echo "=== s39_xla_ptx_lab ($(left)s left)"
set -- ${@:-ln_bf16_32 ln_f16_32 ln_bf16_128}
S39_LAB_PTX=$REPO/.dev/s39_norm_lab.ptx XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( $(left) - 10 )) \
  python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" "$REPO/.dev/s39ptx.so" "$@" 2>&1 | grep -vE "^(WARNING|I0000|W0000)" \
  | tee "$OUT/s39_xla_ptx_lab.txt"
