#!/usr/bin/env bash
# Session 42, call 2 (H200): float32 LayerNorm 32 columns, the package's device code on other CTA shapes of the 8-lane
# layout (bench/lab/s40_onepack_lab.cu) and the lab's kernels at 2 rows a thread (s42_ln32_lab.cu); RMSNorm float32 32
# at 4 and 2 rows a thread. No package build; medians of 100 calls, best of 7 rotated rounds.
#   bash bench/lab/s42_call2.sh    (needs .dev/s39ptx.so, .dev/s40_op.ptx, .dev/s42_ln32.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
S42_LN32=2 S39_ITERS=100 S39_ROUNDS=7 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s40_op.ptx,$REPO/.dev/s42_ln32.ptx \
  PTX_LAB_LOG=s39_xla_ptx_lab_100.txt ptx_lab 250 ln_f32_32 rms_f32_32
