#!/usr/bin/env bash
# Session 10, device call 3 (~590 s): build (sm_90a); the cluster tiers with the exchange as the default against
# CTAs of 256 threads (softmax_long_lab.py --exchange: "xe", "t256"; RMSNorm float32 also on the cluster tier)
# and jnp; then tests/test_softmax_long.py whole (the cluster tiers under every knob, the default dispatch's
# long rows for softmax and the norms) with the time left. Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-585}
l=$(left)
echo "=== exchange lab 2 (${l}s left)"
timeout -k 5 $(( l - 150 )) python3 "$REPO/bench/lab/softmax_long_lab.py" --exchange --budget $(( l - 200 )) \
  --log "$OUT/exchange_lab2.jsonl" \
  --case softmax:float32:65536 --case softmax:bfloat16:65536 --case softmax:float16:65536 \
  --case log_softmax:float32:65536 --case log_softmax:bfloat16:65536 --case softmax:bfloat16:32768 \
  --case softmax:float32:32768 --case layer_norm:float32:65536 --case layer_norm:bfloat16:65536 \
  --case rms_norm:bfloat16:65536 --case layer_norm:float32:32768 --case rms_norm:float16:65536 \
  --case rms_norm:float32:65536 --case log_softmax:float16:32768 \
  >"$OUT/exchange_lab2.log" 2>&1
echo "lab rc=$?"
sed -n '/== long rows lab/,$p' "$OUT/exchange_lab2.log" | cut -c1-400
grep -E "Error|Traceback|budget" "$OUT/exchange_lab2.log" | head -5
l=$(left)
echo "=== long-row tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 5 )) python3 -m pytest -q -n 12 -p no:cacheprovider \
  -o addopts= "$REPO/tests/test_softmax_long.py" >"$OUT/tests_s10b.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_s10b.log" | tail -12 | cut -c1-300
