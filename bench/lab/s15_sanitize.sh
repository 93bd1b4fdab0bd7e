#!/usr/bin/env bash
# Session 15, device calls 12 and 13 (13: initcheck alone, with JK_MATMUL_PAD=0): compute-sanitizer memcheck / racecheck / synccheck / initcheck (bench/sanitize.sh:
# rebuilt with bounds assertions) over the matmuls part of bench/sanitize_cases.py, which now includes SkinnyPipe's
# TMA form (b past L2 by default, and forced at a small shape with a K tail) and its hoisted cp.async ring.
# Logs under $OUT (sanitize.log, sanitize_logs.tar.gz).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export OUT=${OUT:-$REPO/gpu_out} JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real}
JK_SANITIZE_PARTS=matmuls JK_SANITIZE_TOOLS="${JK_SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}" \
  JK_SANITIZE_TIMEOUT=${JK_SANITIZE_TIMEOUT:-380} timeout -k 5 585 bash "$REPO/bench/gpu_check.sh" sanitize
