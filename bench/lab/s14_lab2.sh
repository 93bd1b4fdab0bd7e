#!/usr/bin/env bash
# Session 14, device call 2 (H200): build (sm_90a) with keepfma the bfloat16 cluster default and log_softmax a
# template parameter of the packed cluster kernel; the softmax test files (not large); the long-rows lab at
# 65536 (softmax_long_lab.py --stats14: bf16 softmax def against keep; the others def) and the 16-bit cluster
# kernels under Nsight Compute again (instructions, XU pipe). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
l=$(left)
echo "=== softmax tests (${l}s left)"
JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 240 python3 -m pytest -q -n 8 -p no:cacheprovider \
  -o addopts= -m "not large" "$REPO/tests/test_softmax.py" "$REPO/tests/test_softmax_long.py" >"$OUT/tests_softmax.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_softmax.log" | tail -8 | cut -c1-300
l=$(left)
echo "=== long-rows lab (${l}s left)"
timeout -k 5 $(( l - 60 )) python3 "$REPO/bench/lab/softmax_long_lab.py" --stats14 --budget $(( l - 100 )) \
  --case softmax:bfloat16:65536 --case log_softmax:bfloat16:65536 --case softmax:float16:65536 \
  --case log_softmax:float16:65536 >"$OUT/long_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/long_lab.log" | grep -E "jnp|Error|Trace|budget" | cut -c1-250
l=$(left)
echo "=== ncu (${l}s left)"
METRICS="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum"
METRICS="$METRICS,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"
METRICS="$METRICS,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,launch__registers_per_thread"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 5 )) "$NCU" --clock-control none -k regex:ClusterRowsPacked \
  --metrics "$METRICS" python3 "$REPO/bench/lab/s14_ncu.py" softmax:bfloat16 log_softmax:bfloat16 log_softmax:float16 \
  >"$OUT/ncu.log" 2>&1
echo "ncu rc=$?"; grep -E "ClusterRowsPacked|gpu__time|inst_executed|pipe|issue" "$OUT/ncu.log" | cut -c1-140 | head -40
