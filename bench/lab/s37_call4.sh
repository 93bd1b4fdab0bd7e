#!/usr/bin/env bash
# Session 37, call 4 (H200, warm: call 3's build, the same kernels): the GPU tests but the norm and matmul files
# (test-other), the large transpose tests, then sanitizer run 40 (memcheck over the short-run and transpose parts; its
# own build, last). Logs under $OUT, summaries printed.
#   bash bench/lab/s37_call4.sh
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
mkdir -p "$OUT"
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} XLA_PYTHON_CLIENT_PREALLOCATE=false
T0=$(date +%s)
JK_TEST_WORKERS=16 JK_LARGE_TESTS=0 JK_TEST_TIMEOUT=330 OUT=$OUT timeout -k 5 500 bash "$REPO/bench/gpu_check.sh" ${JK_CALL_BUILD:-} test-other 2>&1 | grep -E "===|passed|failed|rror|exit|FAILED|Timeout" | tail -20
grep -hE "^(FAILED|ERROR)" "$OUT"/tests*.log 2>/dev/null | head
echo "=== large transposes ($(( $(date +%s) - T0 ))s in)"
(cd /tmp && JK_LARGE_TESTS=1 timeout -k 5 $( [ "${JK_SKIP_SANITIZER:-0}" = 1 ] && echo $(( 588 - ($(date +%s) - T0) )) || echo 90 ) python3 -m pytest -q -p no:cacheprovider -o addopts= -m large \
  "$REPO/tests/test_transpose.py" >"$OUT/tests_large_transpose.log" 2>&1)
echo "large rc=$?"; tail -1 "$OUT/tests_large_transpose.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_large_transpose.log" | head
[ "${JK_SKIP_SANITIZER:-0}" = 1 ] && exit 0
echo "=== sanitizer ($(( $(date +%s) - T0 ))s in)"
JK_SANITIZE_PARTS=short_runs,transposes JK_SANITIZE_TOOLS=memcheck JK_SANITIZE_LOGS=$OUT/san \
  timeout -k 5 $(( 585 - ($(date +%s) - T0) )) bash "$REPO/bench/sanitize.sh" 2>&1 | tail -8
