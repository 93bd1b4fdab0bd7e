#!/usr/bin/env bash
# Session 41, call 5 (H200): softmax / log-softmax short rows (32, 128 columns; bf16, f16, float32) on the norms'
# one-pack lanes as lab kernels (bench/lab/s41_softmax_lab.cu) beside jnp and XLA's kernel, no package build (ours is
# the last benchmark's: results.md); 5 rotated rounds.
#   bash bench/lab/s41_call5.sh    (needs .dev/s39ptx.so, .dev/s41_sm.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
echo "=== s39_xla_ptx_lab ($(left)s left)"
(cd /tmp && S41_SOFTMAX=1 S39_ROUNDS=5 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s41_sm.ptx \
  XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 400 python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" \
  "$REPO/.dev/s39ptx.so" sm_bf16_32 sm_f16_32 sm_f32_32 sm_bf16_128 sm_f16_128 sm_f32_128 lsm_bf16_32 lsm_f16_32 \
  lsm_f32_32 lsm_bf16_128 lsm_f16_128 lsm_f32_128 2>&1 \
  | grep -vE "^(WARNING|I0000|W0000)" | grep -vE "^  (PTX|HLO|thunk|launch)" | tee "$OUT/s39_xla_ptx_lab.txt")
