#!/usr/bin/env bash
# Session 33, call 1 (H200): build; bench/gpu_check.sh test-norm (rows of 24 / 48 / 96 columns added); the row tests
# with the packed tier's new configurations forced (3 packs a lane with 1 or 2 rows a group, 6 packs a lane: rows of
# 6, 12 and 24 packs); the short-row lab (bench/lab/s33_short_lab.py). Logs under $OUT.
#   bash bench/lab/s33_call1.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== test-norm ($(left)s left)"
mkdir -p "$OUT/norm" && cd "$REPO" && JK_TEST_WORKERS=16 JK_TEST_TIMEOUT=120 JK_LARGE_TESTS=0 OUT=$OUT/norm \
  bash bench/gpu_check.sh test-norm 2>&1 | tail -3; grep -E "^(FAILED|ERROR)" "$OUT/norm/tests.log" | head
cd /tmp
export JK_NORM_TIER_DYNAMIC=1
norm_tier_tests "rows and not window" 200 35 6 "packed 3 1" "packed 3 2" "packed 6 1"
unset JK_NORM_TIER_DYNAMIC
echo "=== short-row lab ($(left)s left)"
timeout -k 5 $(( $(left) - 8 )) python3 "$REPO/bench/lab/s33_short_lab.py" >"$OUT/s33_short_lab.txt" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/s33_short_lab.txt" | cut -c1-400 | tail -60
