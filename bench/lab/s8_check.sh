#!/usr/bin/env bash
# Session 8, third device call (~450 s): build (sm_90a); the long-row tests (norm and softmax cluster tiers,
# rings); the norms' cluster tier against the tiers before and jnp (softmax_long_lab.py --norm-cluster); the
# benchmark (bench/gpu_check.sh bench: results.json/md, bench.log under $OUT). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
l=$(left)
echo "=== long-row tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 150 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
  "$REPO/tests/test_softmax_long.py" >"$OUT/tests_long.log" 2>&1
echo "long tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_long.log" | tail -12 | cut -c1-300
l=$(left)
echo "=== norm cluster lab (${l}s left)"
timeout -k 5 190 python3 "$REPO/bench/lab/softmax_long_lab.py" --norm-cluster --budget 150 \
  --log "$OUT/norm_cluster_lab.jsonl" \
  --case layer_norm:float32:32768 --case rms_norm:float32:32768 --case layer_norm:float32:65536 \
  --case rms_norm:float32:65536 --case layer_norm:bfloat16:65536 --case rms_norm:float16:65536 \
  --case layer_norm:float32:16384 --case rms_norm:bfloat16:65536 --case layer_norm:float16:65536 \
  >"$OUT/norm_cluster_lab.log" 2>&1
echo "lab rc=$?"
sed -n '/== long rows lab/,$p' "$OUT/norm_cluster_lab.log" | cut -c1-400
grep -E "Error|Traceback" "$OUT/norm_cluster_lab.log" | head -5
l=$(left)
echo "=== bench (${l}s left)"
OUT=$OUT timeout -k 5 $(( l - 5 )) bash "$REPO/bench/gpu_check.sh" bench 2>&1 | tail -5
