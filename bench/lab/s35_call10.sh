#!/usr/bin/env bash
# Session 35, call 10 (H200): the sanitizer (its own debug build) over the windows part (16-bit rows of 20483, 40963
# and 49145 columns on 6 packs a thread, up to 1024 threads) and the short-run part (the output-order 16-byte row copy
# at 128 x 1 with precomputed divisors, and its rcslow / rc256x2 tokens).
#   bash bench/lab/s35_call10.sh
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
JK_SANITIZE_PARTS=windows,short_runs JK_SANITIZE_TOOLS="memcheck racecheck synccheck" JK_SANITIZE_LOGS=$OUT/san \
  timeout -k 5 585 bash "$REPO/bench/sanitize.sh" 2>&1 | tail -25
