#!/usr/bin/env bash
# Session 36, call 1 (H200): build and the full benchmark (bench/gpu_check.sh build bench) on session 35's final code
# (the lean row copy and the second review's host changes had not run the full benchmark); results under $OUT.
#   bash bench/lab/s36_call1.sh
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} XLA_PYTHON_CLIENT_PREALLOCATE=false
OUT=$OUT timeout -k 5 585 bash "$REPO/bench/gpu_check.sh" build bench 2>&1 | tail -8
grep -E "MISSED|targets|geomean" "$OUT/bench.log" | cut -c1-400 | head -20
