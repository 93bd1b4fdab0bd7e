#!/usr/bin/env bash
# Session 9, first device call (~560 s): build (sm_90a); the cluster tiers' tests (softmax and norms, staged
# and unstaged knobs) and the column-tile tests on the new default; then softmax long rows, unstaged
# against staged (softmax_long_lab.py --cluster --staged), and the norms' cluster variants (--norm-cluster,
# set s9) against the tiers before and jnp. Logs under $OUT. Runs on commit 8ddb9cd only (its staged variants and
# lab options were removed in the next commit).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-570}
l=$(left)
echo "=== tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 170 python3 -m pytest -q -n 12 -p no:cacheprovider -o addopts= \
  "$REPO/tests/test_softmax_long.py" "$REPO/tests/test_norm_strided.py" "$REPO/tests/test_softmax_columns.py" \
  -k "cluster or strided or columns" >"$OUT/tests_s9.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_s9.log" | tail -12 | cut -c1-300
l=$(left)
echo "=== softmax cluster lab (${l}s left)"
timeout -k 5 $(( l / 2 )) python3 "$REPO/bench/lab/softmax_long_lab.py" --cluster --staged --budget $(( l / 2 - 40 )) \
  --log "$OUT/cluster_lab.jsonl" \
  --case softmax:float32:32768 --case log_softmax:float32:32768 --case softmax:float32:65536 \
  --case softmax:bfloat16:65536 --case log_softmax:float16:65536 --case softmax:bfloat16:32768 \
  --case log_softmax:bfloat16:32768 --case softmax:float16:32768 >"$OUT/cluster_lab.log" 2>&1
echo "lab rc=$?"
sed -n '/== long rows lab/,$p' "$OUT/cluster_lab.log" | cut -c1-400
grep -E "Error|Traceback" "$OUT/cluster_lab.log" | head -5
l=$(left)
echo "=== norm cluster lab (${l}s left)"
timeout -k 5 $(( l - 5 )) python3 "$REPO/bench/lab/softmax_long_lab.py" --norm-cluster --budget $(( l - 45 )) \
  --log "$OUT/norm_cluster_lab.jsonl" \
  --case layer_norm:float32:32768 --case layer_norm:float32:65536 --case layer_norm:bfloat16:65536 \
  --case rms_norm:float32:32768 --case rms_norm:float32:65536 --case rms_norm:bfloat16:65536 \
  --case layer_norm:float16:65536 --case rms_norm:float16:65536 >"$OUT/norm_cluster_lab.log" 2>&1
echo "lab rc=$?"
sed -n '/== long rows lab/,$p' "$OUT/norm_cluster_lab.log" | cut -c1-400
grep -E "Error|Traceback" "$OUT/norm_cluster_lab.log" | head -5
