#!/usr/bin/env bash
# One device call for the packed 16-bit row tier (norm_packed_block.cuh): build (sm_90a), then
# bench/lab/norm_packed_block_lab.py (bf16/f16 rows of 512-32768 columns: the default dispatch, every
# 'pblock E' / 'pwarp E B' configuration and jnp in one process; float32 LayerNorm at 4096 columns; return_stats),
# then the bf16/f16 row, parameter-group and NaN tests of tests/test_norms.py with each configuration forced,
# then the default suite with the time left. Logs under $OUT (build.log, lab.log, tests_*.log, tests.log).
#   bash bench/lab/norm_packed_block_gpu.sh     (JK_TOTAL_S: seconds the whole call may take, default 290)
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 290
l=$(left)
echo "=== lab (${l}s left)"
timeout -k 5 $(( l - 70 )) python3 "$REPO/bench/lab/norm_packed_block_lab.py" --budget $(( l - 100 )) >"$OUT/lab.log" 2>&1
echo "lab rc=$?"
grep -E "^(copy|budget|Trace|[A-Za-z]+Error)" "$OUT/lab.log" | head -20 | cut -c1-300
sed -n '/==== norm_packed_block_lab/,$p' "$OUT/lab.log"
norm_tier_tests "(rows or parameter_groups or nan_poisons) and not float32 and not one_parameter" 60 14 5 \
  "pblock 32" "pblock 64" "pwarp 32 128" "pwarp 16 256" "pblock 16"
norm_default_tests
