#!/usr/bin/env bash
# Session 42, call 10 (H200): the final kernels: build, tests/test_norms.py in full (large ones too) with
# tests/test_softmax_long.py, then the full benchmark again (results under $OUT).
#   bash bench/lab/s42_call10.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
norm_long_tests 200
echo "=== bench ($(left)s left)"
OUT=$OUT timeout -k 5 $(( $(left) - 5 )) bash "$REPO/bench/gpu_check.sh" bench 2>&1 | tail -3
grep -E "MISSED|targets|geomean" "$OUT/bench.log" | cut -c1-300 | head -12
grep -E "^\| (layer_norm|rms_norm) .* 49152x(32|128) " "$OUT/results.md" | cut -c1-200
