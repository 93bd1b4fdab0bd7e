#!/usr/bin/env bash
# Session 36, call 2 (H200, the machine call 1 built on): the norm test files and every other test file but the
# matmul ones (bench/gpu_check.sh test-norm test-other) on session 35's final code, without rebuilding: call 1
# installed the package. Logs under $OUT, summaries printed.
#   bash bench/lab/s36_call2.sh
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
python3 -c "import jax_kernels, os; print('installed from', os.path.dirname(jax_kernels.__file__))"
JK_TEST_WORKERS=16 JK_LARGE_TESTS=0 JK_TEST_TIMEOUT=560 OUT=$OUT timeout -k 5 585 bash "$REPO/bench/gpu_check.sh" test-norm test-other 2>&1 | grep -E "===|passed|failed|rror|exit|FAILED|Timeout" | tail -30
grep -hE "^(FAILED|ERROR)" "$OUT"/tests*.log 2>/dev/null | head
