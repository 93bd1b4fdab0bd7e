#!/usr/bin/env bash
# Session 12, device call 2 (~560 s): build (sm_90a); tests/test_softmax_long.py (float32 softmax rows past 16384 now
# on the hybrid kernel by default; the norms' hybrid under JK_NORM_HYBRID); then softmax_long_lab.py --hybrid:
# softmax float32 32768 / 65536 ("def" = hybrid 6 + 10, "h0" = the cluster tier, "h3" = 4 + 12) and the norms at
# float32 32768 / 65536 and 16-bit 65536 ("def", "nh1", "nh2"). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
l=$(left)
echo "=== long-row tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 200 python3 -m pytest -q -n 12 \
  -p no:cacheprovider -o addopts= "$REPO/tests/test_softmax_long.py" >"$OUT/tests_long.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Error" "$OUT/tests_long.log" | tail -12 | cut -c1-300
l=$(left)
echo "=== hybrid lab (${l}s left)"
timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/softmax_long_lab.py" --hybrid --budget $(( l - 60 )) \
  --log "$OUT/hybrid_lab.jsonl" --case softmax:float32:65536 --case log_softmax:float32:65536 \
  --case layer_norm:float32:65536 --case rms_norm:float32:65536 \
  --case layer_norm:float32:32768 --case rms_norm:float32:32768 \
  --case layer_norm:bfloat16:65536 --case rms_norm:bfloat16:65536 \
  --case layer_norm:float16:65536 --case rms_norm:float16:65536 \
  --case softmax:float32:32768 --case log_softmax:float32:32768 >"$OUT/hybrid_lab.log" 2>&1
echo "lab rc=$?"
sed -n '/== long rows lab/,$p' "$OUT/hybrid_lab.log" | cut -c1-400
grep -E "Error|Traceback|budget" "$OUT/hybrid_lab.log" | head -5
true
