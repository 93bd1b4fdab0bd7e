#!/usr/bin/env bash
# Session 37, call 10 (H200): sanitizer run 42, memcheck and racecheck over the transposes part on the final kernels
# (int8's word loads of odd rows among the cases: every odd int8 case, (1040, 201) with a 16-byte output side).
#   bash bench/lab/s37_call10.sh
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} XLA_PYTHON_CLIENT_PREALLOCATE=false
JK_SANITIZE_PARTS=transposes JK_SANITIZE_TOOLS="memcheck racecheck" JK_SANITIZE_LOGS=$OUT/san \
  timeout -k 5 580 bash "$REPO/bench/sanitize.sh" 2>&1 | tail -12
