#!/usr/bin/env bash
# Session 12, device call 6 (~300 s): compute-sanitizer memcheck / racecheck / synccheck (bench/sanitize.sh: rebuilt
# with bounds assertions) over the long_rows part of bench/sanitize_cases.py: float32 softmax and RMSNorm rows of
# 32768 / 40004 / 65536 now on the hybrid kernels (per-thread cp.async into shared memory, clusters of 2).
# Logs under $OUT (sanitize.log, sanitize_logs.tar.gz).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export OUT=${OUT:-$REPO/gpu_out} JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real}
JK_SANITIZE_PARTS=long_rows JK_SANITIZE_TOOLS="memcheck racecheck synccheck" \
  JK_SANITIZE_TIMEOUT=${JK_SANITIZE_TIMEOUT:-400} timeout -k 5 585 bash "$REPO/bench/gpu_check.sh" sanitize
