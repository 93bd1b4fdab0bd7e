#!/usr/bin/env bash
# Session 21, prepared for call 14 (not run: no device time left), with bench/lab/s21_coop128_short_k.patch applied
# (H200): short-K fused problems on the cooperative 128x128 tile: build, the GPT-2-small forward
# (bench model), test_linear_epilogue.py's many-tiles and schedule cases, then bench/lab/s21_proj_lab.py (default against ping-pong).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real}
bash "$REPO/bench/gpu_check.sh" build model 2>&1 | grep -E "speedup|jax_kernels:|jnp:|exit|build ok"
cd /tmp
timeout -k 5 100 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= "$REPO/tests/test_linear_epilogue.py" \
  -k "more_tiles or schedules" 2>&1 | tail -1
XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 100 \
  python3 "$REPO/bench/lab/s21_proj_lab.py" gpt 2>&1 | tee "$OUT/proj_lab.log" | grep -E "^\||FAILED|Error" | head -14
