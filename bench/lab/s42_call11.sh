#!/usr/bin/env bash
# Session 42, call 11 (H200): the final kernels built; float32 rows off the sweep where the tiers sat under jnp in
# session 29 (16 and 64 columns: the default tier and the one-pack lanes forced) and float32 LayerNorm 32 on a ragged
# grid (49087 rows; 0.96x in session 40 at 4 rows a thread), ours against jnp (medians of 100, best of 7 rounds).
#   bash bench/lab/s42_call11.sh    (needs .dev/s39ptx.so)
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
S42_TOKENS=2 S39_ITERS=100 S39_ROUNDS=7 S41_NO_XLA=ln_f32_32r,ln_f32_16,ln_f32_64 ptx_lab 200 ln_f32_32r ln_f32_16 \
  rms_f32_16 ln_f32_64 rms_f32_64
