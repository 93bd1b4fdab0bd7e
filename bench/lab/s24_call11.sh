#!/usr/bin/env bash
# Session 24, call 11 (H200): after the review's refactors (pipe::RunRing, pipe::SwizzledStep, PackRow8, DispatchHalf):
# build, the matmul test files (gpu_check.sh test-matmul), then the per-kernel CUPTI times (s24_kernels.py).
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export OUT=${OUT:-$REPO/gpu_out}
JK_CUDA_ARCHS=90a-real JK_TEST_TIMEOUT=250 JK_LARGE_TEST_TIMEOUT=60 bash "$REPO/bench/gpu_check.sh" build test-matmul \
  2>&1 | tail -4
grep -E "passed|failed" "$OUT/tests.log" | tail -3
cd /tmp && XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout 120 \
  python3 "$REPO/bench/lab/s24_kernels.py" 2>&1 | grep -E "^\||Error" | cut -c1-200
