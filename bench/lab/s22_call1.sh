#!/usr/bin/env bash
# Session 22, call 1 (H200): the merged unrolled epilogue and bench/lab/s21_coop128_short_k.patch (both applied):
# build, the GPT-2-small forward (bench model), tests/test_linear_epilogue.py whole, then s22_linear_lab.py.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real}
OUT=$OUT bash "$REPO/bench/gpu_check.sh" build model 2>&1 | grep -E "speedup|jax_kernels:|jnp:|exit|build ok"
S22_LAB=1 JK_TOTAL_S=${JK_TOTAL_S:-470} OUT=$OUT bash "$REPO/bench/lab/lab_call.sh" s22_linear_lab.py "not large" \
  tests/test_linear_epilogue.py
