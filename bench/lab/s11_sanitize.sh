#!/usr/bin/env bash
# Session 11, device call 6 (~590 s): compute-sanitizer memcheck / racecheck / synccheck (bench/sanitize.sh:
# rebuilt with bounds assertions) over the long_rows and norms_and_softmax parts of bench/sanitize_cases.py:
# the statistics changed under every softmax tier (one-exponential merges, the warps' butterfly, pairs on the
# 64-element block kernel, kept exponentials on the 16-bit cluster tier) and the norms' Welford butterfly.
# Logs under $OUT (sanitize.log, sanitize_logs.tar.gz).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export OUT=${OUT:-$REPO/gpu_out} JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real}
JK_SANITIZE_PARTS=long_rows,norms_and_softmax JK_SANITIZE_TOOLS="memcheck racecheck synccheck" \
  JK_SANITIZE_TIMEOUT=${JK_SANITIZE_TIMEOUT:-430} timeout -k 5 585 bash "$REPO/bench/gpu_check.sh" sanitize
