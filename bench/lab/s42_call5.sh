#!/usr/bin/env bash
# Session 42, call 5 (H200): LayerNorm's sums of x and x^2 reduced together (OnePackLayout's kSumsFirst, removed after
# this call: the *_s kernels no longer build) against the two passes on the 32-column layouts (float32 at 4 and 2 rows a
# thread), bf16 64 columns, and float32 rows of mean 4 (the second pass). bench/lab/s40_onepack_lab.cu; no package
# build; medians of 100 calls, best of 7 rotated rounds.
#   bash bench/lab/s42_call5.sh    (needs .dev/s39ptx.so, .dev/s40_op.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
S42_LN32=5 S39_ITERS=100 S39_ROUNDS=7 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s40_op.ptx,$REPO/.dev/s42_ln32.ptx S41_NO_XLA=ln_f32_32,ln_f32_32m \
  ptx_lab 400 ln_f32_32 ln_f32_32m ln_bf16_32 ln_f16_32 ln_bf16_64
