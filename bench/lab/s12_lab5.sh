#!/usr/bin/env bash
# Session 12, device call 9 (~400 s): build (sm_90a); RMSNorm's 16-bit cluster kernel without its 40-56-byte spill
# (norm_cluster.cuh: the packs inside the row counted by formula): the norms' long-row tests, the lab at 16-bit
# 65536 (softmax_long_lab.py --hybrid: "def" is the point; LayerNorm, unchanged, as a control), then the benchmark
# (bench/gpu_check.sh bench). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
l=$(left)
echo "=== norm long-row tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 120 python3 -m pytest -q -n 12 -p no:cacheprovider -o addopts= \
  -k "norm" "$REPO/tests/test_softmax_long.py" >"$OUT/tests_lab5.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Error" "$OUT/tests_lab5.log" | tail -12 | cut -c1-300
l=$(left)
echo "=== lab (${l}s left)"
timeout -k 5 100 python3 "$REPO/bench/lab/softmax_long_lab.py" --hybrid --budget 80 \
  --log "$OUT/hybrid_lab.jsonl" --case rms_norm:bfloat16:65536 --case rms_norm:float16:65536 \
  --case layer_norm:bfloat16:65536 >"$OUT/hybrid_lab.log" 2>&1
echo "lab rc=$?"
sed -n '/== long rows lab/,$p' "$OUT/hybrid_lab.log" | cut -c1-400
l=$(left)
echo "=== bench (${l}s left)"
OUT=$OUT timeout -k 5 $(( l - 5 )) bash "$REPO/bench/gpu_check.sh" bench 2>&1 | grep -E "geomean|exit" | head -12
true
