#!/usr/bin/env bash
# Session 33, call 2 (H200): build; bench/gpu_check.sh test-norm (the new defaults for rows of 6 / 12 / 24 packs); the
# row tests with 5 and 7 packs a lane forced (rows of 10 / 20 / 40 and 14 / 28 / 56 packs); the short-row lab's second
# set (S33_SET=odd: those rows against the default and jnp). Logs under $OUT.
#   bash bench/lab/s33_call2.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== test-norm ($(left)s left)"
mkdir -p "$OUT/norm" && cd "$REPO" && JK_TEST_WORKERS=16 JK_TEST_TIMEOUT=120 JK_LARGE_TESTS=0 OUT=$OUT/norm \
  bash bench/gpu_check.sh test-norm 2>&1 | tail -3; grep -E "^(FAILED|ERROR)" "$OUT/norm/tests.log" | head
cd /tmp
export JK_NORM_TIER_DYNAMIC=1
norm_tier_tests "rows and not window" 200 35 6 "packed 5 1" "packed 7 1"
unset JK_NORM_TIER_DYNAMIC
echo "=== short-row lab, S33_SET=odd ($(left)s left)"
S33_SET=odd timeout -k 5 $(( $(left) - 8 )) python3 "$REPO/bench/lab/s33_short_lab.py" >"$OUT/s33_short_lab.txt" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/s33_short_lab.txt" | cut -c1-300 | tail -60
