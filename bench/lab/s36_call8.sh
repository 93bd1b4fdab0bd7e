#!/usr/bin/env bash
# Session 36, call 8 (H200): build and every test file but the norm and matmul ones (bench/gpu_check.sh build
# test-other) on the final code (call 2 ran test-norm and test-other before the row-copy change; only the transpose's
# row copies changed since). Logs under $OUT, summaries printed.
#   bash bench/lab/s36_call8.sh
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} XLA_PYTHON_CLIENT_PREALLOCATE=false
JK_TEST_WORKERS=16 JK_LARGE_TESTS=0 JK_TEST_TIMEOUT=420 OUT=$OUT timeout -k 5 585 bash "$REPO/bench/gpu_check.sh" build test-other 2>&1 | grep -E "===|passed|failed|rror|exit|FAILED|Timeout|build ok" | tail -30
grep -hE "^(FAILED|ERROR)" "$OUT"/tests*.log 2>/dev/null | head
