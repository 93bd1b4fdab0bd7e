#!/usr/bin/env bash
# Session 41, call 2 (H200): the package's held-words layout for 16-bit 128-column rows (OnePackLayout's kHold) as lab
# kernels (bench/lab/s40_onepack_lab.cu), LayerNorm and RMSNorm, beside the previous layout, the lab's hold
# (s41_rms128_lab.cu), jnp and XLA's kernel; no package build; 9 rotated rounds.
#   bash bench/lab/s41_call2.sh    (needs .dev/s39ptx.so, .dev/s40_op.ptx, .dev/s41_rms.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
echo "=== s39_xla_ptx_lab ($(left)s left)"
(cd /tmp && S41_HOLD=1 S39_ROUNDS=9 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s40_op.ptx,$REPO/.dev/s41_rms.ptx \
  XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 300 python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" \
  "$REPO/.dev/s39ptx.so" ln_bf16_128 ln_f16_128 rms_bf16_128 rms_f16_128 2>&1 \
  | grep -vE "^(WARNING|I0000|W0000)" | grep -vE "^  (PTX|HLO|thunk|launch)" | tee "$OUT/s39_xla_ptx_lab.txt")
