#!/usr/bin/env bash
# Session 42, call 3 (H200): the one-pack lanes' rows reduced two at a time (OnePackLayout's kPairReduce, removed after
# this call: the *_p kernels no longer build) against the same layouts row by row, every short-row case of both norms
# (bench/lab/s40_onepack_lab.cu), beside jnp. No package build; medians of 100 calls, best of 7 rotated rounds.
#   bash bench/lab/s42_call3.sh    (needs .dev/s39ptx.so, .dev/s40_op.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
S42_LN32=3 S39_ITERS=100 S39_ROUNDS=7 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s40_op.ptx S41_NO_XLA=ln_f32_32 \
  ptx_lab 400 ln_f32_32 rms_f32_32 ln_bf16_32 ln_f16_32 rms_bf16_32 rms_f16_32 ln_bf16_128 ln_f16_128 \
  rms_bf16_128 rms_f16_128
