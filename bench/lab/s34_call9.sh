#!/usr/bin/env bash
# Session 34, call 9 (H200): the sanitizer (its own debug build) over the windows part (softmax's register window at 5
# and 6 packs a thread included) and the short-run part (the row copies at 2 accesses a thread, every token).
#   bash bench/lab/s34_call9.sh
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
JK_SANITIZE_PARTS=windows,short_runs JK_SANITIZE_TOOLS="memcheck racecheck synccheck" JK_SANITIZE_LOGS=$OUT/san \
  timeout -k 5 585 bash "$REPO/bench/sanitize.sh" 2>&1 | tail -25
