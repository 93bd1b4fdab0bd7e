#!/usr/bin/env bash
# Session 12, device call 1 (~500 s): build (sm_90a); softmax rows held half in registers, half in shared memory
# (softmax_long_lab.py --hybrid: "def" against "h1" / "h2", knob JK_SOFTMAX_HYBRID) and jnp at float32 32768 /
# 65536 and 16-bit 65536; then the hybrid tests (tests/test_softmax_long.py -k hybrid). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
l=$(left)
echo "=== hybrid tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 150 python3 -m pytest -q -n 12 -x \
  -p no:cacheprovider -o addopts= -k "hybrid" "$REPO/tests/test_softmax_long.py" >"$OUT/tests_hybrid.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Error" "$OUT/tests_hybrid.log" | tail -8 | cut -c1-400
l=$(left)
echo "=== hybrid lab (${l}s left)"
timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/softmax_long_lab.py" --hybrid --budget $(( l - 70 )) \
  --log "$OUT/hybrid_lab.jsonl" --case softmax:float32:65536 --case log_softmax:float32:65536 \
  --case softmax:float32:32768 --case log_softmax:float32:32768 \
  --case softmax:bfloat16:65536 --case log_softmax:float16:65536 >"$OUT/hybrid_lab.log" 2>&1
echo "lab rc=$?"
sed -n '/== long rows lab/,$p' "$OUT/hybrid_lab.log" | cut -c1-400
grep -E "Error|Traceback|budget" "$OUT/hybrid_lab.log" | head -5
