#!/usr/bin/env bash
# Session 11, device call 1 (~590 s): build (sm_90a); how the 16-bit block tier and the cluster tiers get a
# row's statistics (softmax_long_lab.py --stats: two reductions / pairs / kept exponentials, and 16-bit rows on
# clusters at 32 packed elements, three CTAs per SM) against jnp; then the tests of the knob
# (tests/test_softmax_long.py -k stats) with the time left. Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-585}
l=$(left)
echo "=== stats lab (${l}s left)"
timeout -k 5 $(( l - 120 )) python3 "$REPO/bench/lab/softmax_long_lab.py" --stats --budget $(( l - 190 )) \
  --log "$OUT/stats_lab.jsonl" \
  --case softmax:bfloat16:65536 --case softmax:float16:65536 --case softmax:bfloat16:32768 \
  --case softmax:float16:32768 --case log_softmax:bfloat16:65536 --case log_softmax:bfloat16:32768 \
  --case softmax:float32:65536 --case log_softmax:float16:65536 --case softmax:bfloat16:16384 \
  --case softmax:float16:8192 --case softmax:bfloat16:2048 --case softmax:float32:32768 \
  >"$OUT/stats_lab.log" 2>&1
echo "lab rc=$?"
sed -n '/== long rows lab/,$p' "$OUT/stats_lab.log" | cut -c1-400
grep -E "Error|Traceback|budget" "$OUT/stats_lab.log" | head -5
l=$(left)
echo "=== stats tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 5 )) python3 -m pytest -q -n 12 -p no:cacheprovider \
  -o addopts= -k "stats" "$REPO/tests/test_softmax_long.py" >"$OUT/tests_stats.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_stats.log" | tail -12 | cut -c1-300
