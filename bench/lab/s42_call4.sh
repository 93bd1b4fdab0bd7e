#!/usr/bin/env bash
# Session 42, call 4 (H200): float32 LayerNorm 32 columns with the shifted row's statistics (Chan, or the two sums side
# by side; bench/lab/s42_ln32_lab.cu) at 2 and 4 rows a thread; 2 rows a thread for RMSNorm float32 32 and the 16-bit
# rows of 64 columns (s40_onepack_lab.cu). No package build; medians of 100 calls, best of 7 rotated rounds.
#   bash bench/lab/s42_call4.sh    (needs .dev/s39ptx.so, .dev/s40_op.ptx, .dev/s42_ln32.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
S42_LN32=4 S39_ITERS=100 S39_ROUNDS=7 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s40_op.ptx,$REPO/.dev/s42_ln32.ptx S41_NO_XLA=ln_f32_32 \
  ptx_lab 400 ln_f32_32 rms_f32_32 ln_bf16_64 ln_f16_64 rms_bf16_64
