#!/usr/bin/env bash
# Session 35, call 8 (H200): build; the norm test files and every other test file but the matmul ones
# (bench/gpu_check.sh test-norm test-other) on the final kernels. Logs under $OUT, summaries printed.
#   bash bench/lab/s35_call8.sh
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} XLA_PYTHON_CLIENT_PREALLOCATE=false
JK_TEST_WORKERS=16 JK_LARGE_TESTS=0 JK_TEST_TIMEOUT=440 OUT=$OUT timeout -k 5 585 bash "$REPO/bench/gpu_check.sh" build test-norm test-other 2>&1 | grep -E "===|passed|failed|rror|exit|FAILED|Timeout" | tail -30
grep -hE "^(FAILED|ERROR)" "$OUT"/tests*.log 2>/dev/null | head
