#!/usr/bin/env bash
# Session 42, call 15 (H200): float32 LayerNorm on the one-pack lanes shifted by the row's first element (the review's
# large-mean test failed without it, call 14): build, the large-mean and one-pack tests, ours against jnp at float32
# 16 / 32 / 64 columns (medians of 100, best of 7 rounds), the full benchmark, then tests/test_norms.py (not large).
#   bash bench/lab/s42_call15.sh    (needs .dev/s39ptx.so)
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
timeout 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 8 -k "large_mean or one_pack" \
  "$REPO/tests/test_norms.py" 2>&1 | tail -4
S39_ITERS=100 S39_ROUNDS=7 S41_NO_XLA=ln_f32_16,ln_f32_32,ln_f32_64 ptx_lab 80 ln_f32_16 ln_f32_32 ln_f32_64
echo "=== bench ($(left)s left)"
OUT=$OUT timeout -k 5 220 bash "$REPO/bench/gpu_check.sh" bench 2>&1 | tail -2
grep -E "targets|geomean" "$OUT/bench.log" | cut -c1-300 | head -4
grep -E "^\| (layer_norm|rms_norm) .* 49152x32 " "$OUT/results.md" | cut -c1-200
[ "$(left)" -gt 50 ] && norm_default_tests
