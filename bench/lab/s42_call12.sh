#!/usr/bin/env bash
# Session 42, call 12 (H200): the one-pack lanes' 16-lane layout (float32 64, 16-bit 128 columns) at 2 and 4 rows a
# thread against the package's 8 x 256 (bench/lab/s40_onepack_lab.cu), beside jnp; no package build; medians of 100
# calls, best of 7 rotated rounds.
#   bash bench/lab/s42_call12.sh    (needs .dev/s39ptx.so, .dev/s40_op.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
S42_LN32=12 S39_ITERS=100 S39_ROUNDS=7 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s40_op.ptx \
  S41_NO_XLA=ln_f32_64,ln_bf16_128,ln_f16_128 ptx_lab 300 ln_f32_64 rms_f32_64 ln_bf16_128 ln_f16_128 rms_bf16_128 \
  rms_f16_128
