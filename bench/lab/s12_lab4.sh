#!/usr/bin/env bash
# Session 12, device call 7 (~300 s): build (sm_90a); the hybrid tests (tests/test_softmax_long.py -k hybrid: the
# 16-bit packed form under JK_SOFTMAX_HYBRID = 4 / 5); softmax_long_lab.py --hybrid at 16-bit 65536 ("def" = the
# packed cluster tier, "h4" = 8 + 8 packs in one CTA, "h5" = 6 + 10). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-400}
l=$(left)
echo "=== hybrid tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 120 python3 -m pytest -q -n 12 -p no:cacheprovider -o addopts= \
  -k "hybrid" "$REPO/tests/test_softmax_long.py" >"$OUT/tests_lab4.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Error" "$OUT/tests_lab4.log" | tail -12 | cut -c1-300
l=$(left)
echo "=== hybrid lab (${l}s left)"
timeout -k 5 $(( l - 5 )) python3 "$REPO/bench/lab/softmax_long_lab.py" --hybrid --budget $(( l - 40 )) \
  --log "$OUT/hybrid_lab.jsonl" --case softmax:bfloat16:65536 --case log_softmax:bfloat16:65536 \
  --case softmax:float16:65536 --case log_softmax:float16:65536 >"$OUT/hybrid_lab.log" 2>&1
echo "lab rc=$?"
sed -n '/== long rows lab/,$p' "$OUT/hybrid_lab.log" | cut -c1-400
true
