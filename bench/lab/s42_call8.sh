#!/usr/bin/env bash
# Session 42, call 8 (H200): build, the full benchmark (results under $OUT; short calls timed up to 100 times since
# this session), then tests/test_norms.py (not large) with the time left.
#   bash bench/lab/s42_call8.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== bench ($(left)s left)"
start=$(date +%s)
OUT=$OUT timeout -k 5 $(( $(left) - 60 )) bash "$REPO/bench/gpu_check.sh" bench 2>&1 | tail -3
echo "bench took $(( $(date +%s) - start ))s"
grep -E "MISSED|targets|geomean" "$OUT/bench.log" | cut -c1-300 | head -12
grep -E "^\| (layer_norm|rms_norm) .* 49152x(32|64|128) " "$OUT/results.md" | cut -c1-200
[ "$(left)" -gt 50 ] && norm_default_tests
