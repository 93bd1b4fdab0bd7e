#!/usr/bin/env bash
# Session 8, second device call (~300 s): build (sm_90a); the cluster tier's tests; softmax long rows under
# the cluster tier's second set of variants (occupancy-sized persistent grids, 16-bit rows packed at 64
# elements per thread) against the default and jnp (softmax_long_lab.py --cluster). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-400}
l=$(left)
echo "=== tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 150 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
  "$REPO/tests/test_softmax_long.py" -k "cluster" >"$OUT/tests_cluster.log" 2>&1
echo "cluster tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_cluster.log" | tail -8 | cut -c1-300
l=$(left)
echo "=== softmax cluster lab (${l}s left)"
timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/softmax_long_lab.py" --cluster --budget $(( l - 60 )) \
  --log "$OUT/cluster_lab.jsonl" \
  --case softmax:float32:32768 --case log_softmax:float32:32768 --case softmax:float32:65536 \
  --case log_softmax:float32:65536 --case softmax:bfloat16:65536 --case log_softmax:float16:65536 \
  --case softmax:float16:65536 --case log_softmax:bfloat16:65536 --case softmax:bfloat16:32768 \
  --case log_softmax:float16:32768 >"$OUT/cluster_lab.log" 2>&1
echo "lab rc=$?"
sed -n '/== long rows lab/,$p' "$OUT/cluster_lab.log" | cut -c1-400
grep -E "Error|Traceback" "$OUT/cluster_lab.log" | head -5
