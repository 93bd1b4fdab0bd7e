#!/usr/bin/env bash
# Session 16, device call 12: racecheck alone over the matmuls part, run on a check build whose k loops end on
# __syncthreads() instead of the groups' named barriers (a working-tree edit of SimtRegisterBlockedBody's
# group_sync, not committed), to test whether run 14's reports come from the named-barrier mix. It did not finish
# within its 200 s limit (bench/results/h200/sanitize/summary.md, run 14).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export OUT=${OUT:-$REPO/gpu_out} JK_CUDA_ARCHS=90a-real
JK_SANITIZE_PARTS=matmuls JK_SANITIZE_TOOLS="racecheck" JK_SANITIZE_TIMEOUT=200 timeout -k 5 400 bash "$REPO/bench/gpu_check.sh" sanitize
