#!/usr/bin/env bash
# Session 20, device call 13: compute-sanitizer memcheck / racecheck / synccheck (bench/sanitize.sh: rebuilt with
# bounds assertions) over the matmuls part of bench/sanitize_cases.py, which now includes the multicast pairs
# (128x256 sharing b, 128x64 sharing a, fused cooperative and ping-pong pairs). Logs under $OUT.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export OUT=${OUT:-$REPO/gpu_out} JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real}
JK_SANITIZE_PARTS=matmuls JK_SANITIZE_TOOLS="${JK_SANITIZE_TOOLS:-memcheck racecheck synccheck}" \
  JK_SANITIZE_TIMEOUT=${JK_SANITIZE_TIMEOUT:-300} timeout -k 5 560 bash "$REPO/bench/gpu_check.sh" sanitize
