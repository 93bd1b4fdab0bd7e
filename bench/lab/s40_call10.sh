#!/usr/bin/env bash
# Session 40, call 10 (H200): build (the one-pack lanes for 16-bit rows of 32 columns and LayerNorm 128, float32 32;
# call 8's kernels); tests/test_norms.py; the full benchmark (results under $OUT).
#   bash bench/lab/s40_call10.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
JK_LARGE_TESTS=0 timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 -m "not large" \
  "$REPO/tests/test_norms.py" >"$OUT/tests_norms.log" 2>&1
echo "norms rc=$?"; tail -1 "$OUT/tests_norms.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_norms.log" | head
echo "=== bench ($(left)s left)"
OUT=$OUT timeout -k 5 $(( $(left) - 5 )) bash "$REPO/bench/gpu_check.sh" bench 2>&1 | tail -3
grep -E "MISSED|targets|geomean" "$OUT/bench.log" | cut -c1-300 | head -12
grep -E "^\| (layer_norm|rms_norm) .* 49152x(32|128) " "$OUT/results.md" | cut -c1-200
