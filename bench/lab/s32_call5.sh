#!/usr/bin/env bash
# Session 32, call 5 (H200): build; bench/gpu_check.sh test-norm (the norm test files) and the row-pairs knob tests of
# tests/test_softmax_long.py on the final defaults; then the benchmark (bench/gpu_check.sh bench). Logs under $OUT.
#   bash bench/lab/s32_call5.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== pairs tests ($(left)s left)"
timeout -k 5 100 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_softmax_long.py" \
  -k "PAIRS" >"$OUT/tests_pairs.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_pairs.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_pairs.log" | head
echo "=== test-norm ($(left)s left)"
mkdir -p "$OUT/norm" && cd "$REPO" && JK_TEST_WORKERS=16 JK_TEST_TIMEOUT=200 JK_LARGE_TESTS=0 OUT=$OUT/norm \
  bash bench/gpu_check.sh test-norm 2>&1 | tail -3
echo "=== bench ($(left)s left)"
cd "$REPO" && OUT=$OUT bash bench/gpu_check.sh bench 2>&1 | grep -E "timed|exit"
