#!/usr/bin/env bash
# Session 37, call 11 (H200): build, then the GPU tests but the norm and matmul files (test-other) on the final kernels,
# with 420 s for the tests (call 5's 330 s ended its last softmax knob tests). Logs under $OUT.
#   bash bench/lab/s37_call11.sh
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
mkdir -p "$OUT"
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} XLA_PYTHON_CLIENT_PREALLOCATE=false
JK_TEST_WORKERS=16 JK_LARGE_TESTS=0 JK_TEST_TIMEOUT=420 OUT=$OUT timeout -k 5 585 bash "$REPO/bench/gpu_check.sh" \
  build test-other 2>&1 | grep -E "===|passed|failed|rror|exit|FAILED|Timeout|build ok" | tail -20
grep -hE "^(FAILED|ERROR)" "$OUT"/tests*.log 2>/dev/null | head
