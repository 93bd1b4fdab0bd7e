#!/usr/bin/env bash
# Session 37, call 8 (H200): sanitizer run 41, memcheck and racecheck over the transposes part (its own build), with the
# padded tiles' 16-byte sides (kVecIn / kVecOut) among the cases. Logs under $OUT/san, summaries printed.
#   bash bench/lab/s37_call8.sh
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} XLA_PYTHON_CLIENT_PREALLOCATE=false
JK_SANITIZE_PARTS=transposes JK_SANITIZE_TOOLS="memcheck racecheck" JK_SANITIZE_LOGS=$OUT/san \
  timeout -k 5 580 bash "$REPO/bench/sanitize.sh" 2>&1 | tail -12
