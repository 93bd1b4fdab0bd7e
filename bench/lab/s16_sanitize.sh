#!/usr/bin/env bash
# Session 16, device call 11: compute-sanitizer memcheck / racecheck / synccheck (bench/sanitize.sh: rebuilt with
# bounds assertions) over the matmuls part of bench/sanitize_cases.py, which now includes the exact float32 split-K
# in clusters of 2 (two k groups a CTA, the split closing barrier), 4 and 8. Logs under $OUT.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export OUT=${OUT:-$REPO/gpu_out} JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real}
JK_SANITIZE_PARTS=matmuls JK_SANITIZE_TOOLS="${JK_SANITIZE_TOOLS:-memcheck racecheck synccheck}" \
  JK_SANITIZE_TIMEOUT=${JK_SANITIZE_TIMEOUT:-150} timeout -k 5 560 bash "$REPO/bench/gpu_check.sh" sanitize
