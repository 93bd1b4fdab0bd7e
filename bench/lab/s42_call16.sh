#!/usr/bin/env bash
# Session 42, call 16 (H200): the final kernels (float32 one-pack LayerNorm shifted): build and the full benchmark
# again (results under $OUT), a second run beside call 15's.
#   bash bench/lab/s42_call16.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== bench ($(left)s left)"
OUT=$OUT timeout -k 5 $(( $(left) - 5 )) bash "$REPO/bench/gpu_check.sh" bench 2>&1 | tail -2
grep -E "targets|geomean" "$OUT/bench.log" | cut -c1-300 | head -4
grep -E "^\| (layer_norm|rms_norm) .* 49152x32 " "$OUT/results.md" | cut -c1-200
