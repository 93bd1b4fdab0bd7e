#!/usr/bin/env bash
# One device call for the float32 register row tier capped at 64 registers (BlockPerRowRegistersTwoPerSm,
# JK_NORM_TIER='block2 8 B', session 5, unmeasured): build (sm_90a), then bench/lab/norm_packed_block_lab.py
# on float32 LayerNorm/RMSNorm rows of 8192 and 16384 columns (default, block2, block, tworeads and jnp in one
# process), then the float32 row tests of tests/test_norms.py with 'block2 8 512' forced. Logs under $OUT.
#   bash bench/lab/norm_block2_gpu.sh     (JK_TOTAL_S: seconds the whole call may take, default 240)
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 240
l=$(left)
echo "=== lab (${l}s left)"
timeout -k 5 $(( l - 60 )) python3 "$REPO/bench/lab/norm_packed_block_lab.py" --dtypes f32 --cols 8192,16384 \
  --no-extra --budget $(( l - 90 )) >"$OUT/lab.log" 2>&1
echo "lab rc=$?"
grep -E "^(copy|budget|Trace|[A-Za-z]+Error)" "$OUT/lab.log" | head -20 | cut -c1-300
sed -n '/==== norm_packed_block_lab/,$p' "$OUT/lab.log"
norm_tier_tests "rows and float32" 40 50 2 "block2 8 512"
