#!/usr/bin/env bash
# Session 35, call 9 (H200): build and the benchmark (bench/gpu_check.sh build bench) on the final kernels; results
# under $OUT (results.json / results.md / bench.log / plots.tar).
#   bash bench/lab/s35_call9.sh
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} XLA_PYTHON_CLIENT_PREALLOCATE=false
OUT=$OUT timeout -k 5 585 bash "$REPO/bench/gpu_check.sh" build bench 2>&1 | tail -8
grep -E "MISSED|targets|geomean" "$OUT/bench.log" | cut -c1-400 | head -20
