#!/usr/bin/env bash
# Session 42, call 7 (H200): the package built with float32 32-column rows (and 16-bit 64, off by default) on the
# one-pack lanes at 2 rows a thread: ours against jnp (medians of 100 calls, best of 7 rotated rounds) at float32 32
# columns and at 16-bit 64 (the default packed tier and the one-pack lanes forced); then tests/test_norms.py (not large).
#   bash bench/lab/s42_call7.sh    (needs .dev/s39ptx.so)
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
S42_TOKENS=1 S39_ITERS=100 S39_ROUNDS=7 S41_NO_XLA=ln_f32_32 ptx_lab 150 ln_f32_32 rms_f32_32 ln_bf16_64 ln_f16_64 \
  rms_bf16_64
norm_default_tests
