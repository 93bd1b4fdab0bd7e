#!/usr/bin/env bash
# Session 19: build (sm_90a); softmax / log_softmax against jax.nn at hidden sizes off the sweep
# (bench/lab/softmax_sweep.py --cols, CUPTI). Log under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
l=$(left)
echo "=== softmax sweep (${l}s left)"
timeout -k 5 $(( l - 5 )) python3 "$REPO/bench/lab/softmax_sweep.py" --no-mask \
  --cols ${JK_COLS:-1536 2560 3072 5120 6144 10240 12288 14336} >"$OUT/softmax_cols.txt" 2>&1
echo "rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/softmax_cols.txt" | tail -60 | cut -c1-200
