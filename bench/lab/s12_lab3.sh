#!/usr/bin/env bash
# Session 12, device call 3 (~400 s): build (sm_90a); tests (the norms' long rows and hybrid knobs: RMSNorm float32
# past 16384 now on the hybrid kernel by default, LayerNorm's one-pass staged statistics; the warp tier's loop
# knob); softmax_long_lab.py --hybrid on the norms' float32 rows; softmax_loops_lab.py (JK_SOFTMAX_WARP_LOOPS) at
# 32 / 128 / 512 columns. Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
l=$(left)
echo "=== tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 150 python3 -m pytest -q -n 12 -p no:cacheprovider -o addopts= \
  -k "norm or loops" "$REPO/tests/test_softmax_long.py" "$REPO/tests/test_softmax.py" >"$OUT/tests_lab3.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Error" "$OUT/tests_lab3.log" | tail -12 | cut -c1-300
l=$(left)
echo "=== norm hybrid lab (${l}s left)"
timeout -k 5 $(( l - 100 )) python3 "$REPO/bench/lab/softmax_long_lab.py" --hybrid --budget $(( l - 160 )) \
  --log "$OUT/hybrid_lab.jsonl" --case layer_norm:float32:65536 --case rms_norm:float32:65536 \
  --case layer_norm:float32:32768 --case rms_norm:float32:32768 >"$OUT/hybrid_lab.log" 2>&1
echo "lab rc=$?"
sed -n '/== long rows lab/,$p' "$OUT/hybrid_lab.log" | cut -c1-400
grep -E "Error|Traceback|budget" "$OUT/hybrid_lab.log" | head -5
l=$(left)
echo "=== loops lab (${l}s left)"
timeout -k 5 $(( l - 5 )) python3 "$REPO/bench/lab/softmax_loops_lab.py" --log "$OUT/loops_lab.jsonl" \
  >"$OUT/loops_lab.log" 2>&1
echo "loops rc=$?"
grep -vE "^(WARNING|I0000|W0000)" "$OUT/loops_lab.log" | cut -c1-300 | tail -22
true
