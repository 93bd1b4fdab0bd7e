#!/usr/bin/env bash
# Session 42, call 1 (H200): float32 LayerNorm 32 columns, the lab kernels of bench/lab/s42_ln32_lab.cu (floors, one
# reduction, Chan's one-pass statistics, other layouts) beside the package's device code (op_lnf32_32), jnp and XLA's
# kernel; no package build. Medians of 10 calls (the benchmark's then), best of 7 rotated rounds; then medians of 100.
#   bash bench/lab/s42_call1.sh    (needs .dev/s39ptx.so, .dev/s40_op.ptx, .dev/s42_ln32.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
for iters in 10 100; do
  S42_LN32=1 S39_ITERS=$iters S39_ROUNDS=7 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s40_op.ptx,$REPO/.dev/s42_ln32.ptx \
    PTX_LAB_LOG=s39_xla_ptx_lab_$iters.txt ptx_lab 250 ln_f32_32
done
