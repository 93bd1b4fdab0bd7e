#!/usr/bin/env bash
# Session 41, call 1 (H200): RMSNorm 16-bit 128 columns, the package's kernel as a lab kernel (s40_onepack_lab.cu)
# beside the schedules of bench/lab/s41_rms128_lab.cu, jnp and XLA's kernel (no package build), 9 rotated rounds;
# then Nsight Compute over one launch of each (time, issue activity, stall reasons).
#   bash bench/lab/s41_call1.sh    (needs .dev/s39ptx.so, .dev/s40_op.ptx, .dev/s41_rms.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
echo "=== s39_xla_ptx_lab ($(left)s left)"
(cd /tmp && S41_RMS=1 S39_ROUNDS=9 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s40_op.ptx,$REPO/.dev/s41_rms.ptx \
  XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 240 python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" \
  "$REPO/.dev/s39ptx.so" rms_bf16_128 rms_f16_128 2>&1 \
  | grep -vE "^(WARNING|I0000|W0000)" | grep -vE "^  (PTX|HLO|thunk|launch)" | tee "$OUT/s39_xla_ptx_lab.txt")
M="$(ncu_base_metrics),$(ncu_stall_metrics long_scoreboard short_scoreboard wait lg_throttle drain no_instruction)"
# S39_ROUNDS=0: each kernel launched once (outputs checked, nothing timed). As run in call 1 this step had its own copy
# of ncu_run printing only the 384 / 768-CTA kernels (bench/lab/s41/call1_ncu.txt); ncu_run lists every kernel.
(cd /tmp && export S41_RMS=1 S39_ROUNDS=0 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s40_op.ptx,$REPO/.dev/s41_rms.ptx &&
  ncu_run "$REPO/bench/lab/s39_xla_ptx_lab.py" "$M" "$REPO/.dev/s39ptx.so" rms_bf16_128 rms_f16_128)
