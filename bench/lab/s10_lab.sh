#!/usr/bin/env bash
# Session 10, device call 2 (~590 s): build (sm_90a); the cluster exchange lab (softmax_long_lab.py --exchange:
# JK_CLUSTER_EXCHANGE 0 = a cluster barrier per row, 1 = statistics pushed with st.async + mbarrier; RMSNorm
# also on its cluster tier) against jnp; then the cluster tiers' tests (each knob with one exchange) with the
# time left. Logs under $OUT. (Call 1 ran this script at commit c7e29c7 with --prefetch: bench/lab/s10_h200.md.)
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-585}
l=$(left)
echo "=== exchange lab (${l}s left)"
timeout -k 5 $(( l - 100 )) python3 "$REPO/bench/lab/softmax_long_lab.py" --exchange --budget $(( l - 150 )) \
  --log "$OUT/exchange_lab.jsonl" \
  --case softmax:float32:65536 --case softmax:bfloat16:65536 --case layer_norm:float32:65536 \
  --case rms_norm:float32:65536 --case softmax:float32:32768 --case layer_norm:float32:32768 \
  --case rms_norm:bfloat16:65536 --case log_softmax:float16:65536 --case layer_norm:bfloat16:65536 \
  --case rms_norm:float32:32768 --case log_softmax:float32:32768 --case log_softmax:float32:65536 \
  >"$OUT/exchange_lab.log" 2>&1
echo "lab rc=$?"
sed -n '/== long rows lab/,$p' "$OUT/exchange_lab.log" | cut -c1-400
grep -E "Error|Traceback|budget" "$OUT/exchange_lab.log" | head -5
l=$(left)
echo "=== cluster tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 5 )) python3 -m pytest -q -n 12 -p no:cacheprovider \
  -o addopts= "$REPO/tests/test_softmax_long.py" -k "cluster" >"$OUT/tests_s10.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_s10.log" | tail -12 | cut -c1-300
