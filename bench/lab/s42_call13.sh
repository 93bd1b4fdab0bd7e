#!/usr/bin/env bash
# Session 42, call 13 (H200): the final kernels (float32 16 and 64 columns on the one-pack lanes too): build,
# tests/test_norms.py (not large), the full benchmark (results under $OUT), ours against jnp at float32 16 / 64
# columns (medians of 100, best of 7 rounds), then compute-sanitizer memcheck over the one-pack lanes with the time left.
#   bash bench/lab/s42_call13.sh    (needs .dev/s39ptx.so)
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
norm_default_tests
echo "=== bench ($(left)s left)"
OUT=$OUT timeout -k 5 220 bash "$REPO/bench/gpu_check.sh" bench 2>&1 | tail -2
grep -E "targets|geomean" "$OUT/bench.log" | cut -c1-300 | head -4
grep -E "^\| (layer_norm|rms_norm) .* 49152x32 " "$OUT/results.md" | cut -c1-200
S42_TOKENS=2 S39_ITERS=100 S39_ROUNDS=7 S41_NO_XLA=ln_f32_16,ln_f32_64 ptx_lab 60 ln_f32_16 rms_f32_16 ln_f32_64 \
  rms_f32_64
echo "=== sanitizer ($(left)s left)"
JK_SANITIZE_PARTS=one_pack_rows JK_SANITIZE_TOOLS=memcheck JK_SANITIZE_LOGS=$OUT timeout -k 5 $(( $(left) - 5 )) \
  bash "$REPO/bench/sanitize.sh" 2>&1 | tail -3
