#!/usr/bin/env bash
# Session 21, call 12 (H200): the wgmma tier from K = 64 (WgmmaPaysOff): build, the matmul test files, the GPT-2-small
# forward (bench model), then bench/lab/s21_scores_lab.py (default = wgmma now at K = 64 and 128).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real}
bash "$REPO/bench/gpu_check.sh" build test-matmul model 2>&1 | grep -E "passed|failed|speedup|jax_kernels:|jnp:|exit|build ok"
cd /tmp
XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 120 \
  python3 "$REPO/bench/lab/s21_scores_lab.py" 2>&1 | tee "$OUT/scores_lab.log" | grep -v Warning | tail -5
