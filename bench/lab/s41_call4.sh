#!/usr/bin/env bash
# Session 41, call 4 (H200): RMSNorm 16-bit 32 columns, CTA shapes of the one-pack lanes as lab kernels
# (bench/lab/s40_onepack_lab.cu) beside the package's shape, jnp and XLA's kernel; no package build; 9 rotated rounds.
#   bash bench/lab/s41_call4.sh    (needs .dev/s39ptx.so, .dev/s40_op.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
echo "=== s39_xla_ptx_lab ($(left)s left)"
(cd /tmp && S41_RMS32=1 S39_ROUNDS=9 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s40_op.ptx \
  XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 300 python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" \
  "$REPO/.dev/s39ptx.so" rms_bf16_32 rms_f16_32 2>&1 \
  | grep -vE "^(WARNING|I0000|W0000)" | grep -vE "^  (PTX|HLO|thunk|launch)" | tee "$OUT/s39_xla_ptx_lab.txt")
