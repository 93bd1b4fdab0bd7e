#!/usr/bin/env bash
# (The metric lists were factored into norm_gpu_common.sh after the call: the same metrics, in another order.)
# Session 14, device call 1 (H200): build (sm_90a); the statistics tests with the new JK_SOFTMAX_STATS=keepfma
# (bfloat16 softmax's kept exponentials scaled on the packed pairs); Nsight Compute (clocks untouched) on the
# 16-bit cluster tier at 24576 x 65536: time, DRAM throughput, issue activity, per-pipe instruction rates, stall
# reasons, for bf16 / f16 softmax and log_softmax and bf16 keepfma; then the long-rows lab timing def against
# keepfma and jnp (softmax_long_lab.py --stats14). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
l=$(left)
echo "=== stats tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 150 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
  -k "stats" "$REPO/tests/test_softmax_long.py" >"$OUT/tests_stats.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_stats.log" | tail -6 | cut -c1-300
l=$(left)
echo "=== ncu (${l}s left)"
METRICS="$(ncu_base_metrics),regex:sm__inst_executed_pipe_[a-z0-9_]+\.avg\.pct_of_peak_sustained_active"
METRICS="$METRICS,regex:sm__pipe_[a-z0-9_]+_cycles_active\.avg\.pct_of_peak_sustained_active"
METRICS="$METRICS,$(ncu_stall_metrics barrier membar short_scoreboard long_scoreboard mio_throttle lg_throttle \
  math_pipe_throttle wait not_selected selected dispatch_stall no_instruction drain sleeping)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 200 "$NCU" --clock-control none -k regex:ClusterRowsPacked \
  --metrics "$METRICS" python3 "$REPO/bench/lab/s14_ncu.py" softmax:bfloat16 softmax:bfloat16:keepfma \
  softmax:float16 log_softmax:bfloat16 log_softmax:float16 >"$OUT/ncu.log" 2>&1
echo "ncu rc=$?"; grep -E "ClusterRowsPacked|ran |==ERR|Error" "$OUT/ncu.log" | cut -c1-160 | head -20
l=$(left)
echo "=== long-rows lab (${l}s left)"
timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/softmax_long_lab.py" --stats14 --budget $(( l - 40 )) \
  --case softmax:bfloat16:65536 --case log_softmax:bfloat16:65536 --case softmax:float16:65536 \
  --case softmax:bfloat16:32768 >"$OUT/long_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/long_lab.log" | grep -E "jnp|Error|Trace|budget" | cut -c1-250
