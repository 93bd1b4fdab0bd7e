#!/usr/bin/env bash
# Session 19: build (sm_90a); LayerNorm / RMSNorm against jnp at model hidden sizes the sweep does not cover
# (1536, 2560, 3072, 5120, 6144, 12288 columns; bench/lab/norm_sweep.py --cols, CUPTI, the benchmark's method).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
l=$(left)
echo "=== norm sweep at ${JK_COLS:=1536,2560,3072,5120,6144,12288} columns (${l}s left)"
timeout -k 5 $(( l - 5 )) python3 "$REPO/bench/lab/norm_sweep.py" --cols "$JK_COLS" >"$OUT/norm_cols.txt" 2>&1
echo "sweep rc=$?"; sed -n '/==== norm sweep summary/,$p' "$OUT/norm_cols.txt" | head -60
