#!/usr/bin/env bash
# Session 8, one device call (~420 s; give it a 600 s timeout). Logs under $OUT.
#  1. build (sm_90a);
#  2. tests of the new paths: softmax's cluster tier (JK_SOFTMAX_CLUSTER_ROWS), the tiled row walks
#     (JK_TRANSPOSE_TIERS=rowtile*), the exact-float32 pipeline with and without the swizzle;
#  3. softmax long rows: the cluster tier's variants against the default and jnp (softmax_long_lab.py --cluster);
#  4. (run 1 only) the attention permute under tiled row walks, since removed (bench/lab/s8_h200.md);
#  5. exact float32 matmul, swizzled a tile against before (simt_swizzle_lab.py).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-540}
# (run 1 timed the variants c32r2 c32r1 c32r0 c16r2 c32r4, the lab's list then)
l=$(left)
echo "=== tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 120 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
  "$REPO/tests/test_softmax_long.py" -k "cluster" >"$OUT/tests_cluster.log" 2>&1
echo "cluster tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_cluster.log" | tail -8 | cut -c1-300
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 60 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
  "$REPO/tests/test_transpose.py" -k "row_copy" "$REPO/tests/test_matmul.py" -k "row_copy or float32_pipeline" \
  >"$OUT/tests_row_simt.log" 2>&1
echo "row/simt tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_row_simt.log" | tail -8 | cut -c1-300
l=$(left)
echo "=== softmax cluster lab (${l}s left)"
timeout -k 5 200 python3 "$REPO/bench/lab/softmax_long_lab.py" --cluster --budget 170 --log "$OUT/cluster_lab.jsonl" \
  --case softmax:float32:32768 --case log_softmax:float32:32768 --case softmax:float32:65536 \
  --case softmax:bfloat16:65536 --case log_softmax:float16:65536 --case softmax:bfloat16:32768 \
  >"$OUT/cluster_lab.log" 2>&1
echo "lab rc=$?"
sed -n '/== long rows lab/,$p' "$OUT/cluster_lab.log" | cut -c1-400
grep -E "Error|Traceback" "$OUT/cluster_lab.log" | head -5
# Step 4 (the tiled row walks) ran here in run 1; the tokens are gone (bench/lab/s8_h200.md).
l=$(left)
echo "=== simt swizzle lab (${l}s left)"
timeout -k 5 $(( l > 100 ? 90 : l - 10 )) python3 "$REPO/bench/lab/simt_swizzle_lab.py" >"$OUT/simt_lab.log" 2>&1
echo "lab rc=$?"; grep -E "^\||device|Error" "$OUT/simt_lab.log" | cut -c1-200
