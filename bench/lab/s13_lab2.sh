#!/usr/bin/env bash
# As run: on a lab build whose JK_MATMUL_SIMT=bk32 variant was reverted after this call (it lost); the knob is gone.
# Session 13, device call 2 (H200): build (sm_90a); tests/test_softmax.py on the GPU (the warp tier's new 16-bit
# loads); ours vs jnp at 49152 x 128 (s13_bf16_lab.py --cols 128); the exact float32 matmul at BK = 16 (default)
# and BK = 32 (JK_MATMUL_SIMT=bk32) against jnp (simt_swizzle_lab.py); Nsight Compute stall reasons of both at
# 4096^3 (clocks untouched). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
l=$(left)
echo "=== softmax tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 150 python3 -m pytest -q -n 12 -x -p no:cacheprovider -o addopts= \
  "$REPO/tests/test_softmax.py" >"$OUT/tests_softmax.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_softmax.log" | tail -6 | cut -c1-300
l=$(left)
echo "=== 128-column lab (${l}s left)"
timeout -k 5 100 python3 "$REPO/bench/lab/s13_bf16_lab.py" --cols 128 >"$OUT/lab128.log" 2>&1
echo "lab rc=$?"; grep -E "^\||Error|Traceback" "$OUT/lab128.log" | cut -c1-300
l=$(left)
echo "=== simt lab (${l}s left)"
timeout -k 5 120 python3 "$REPO/bench/lab/simt_swizzle_lab.py" --variants "bk16=,bk32=bk32" \
  --shapes 4096x4096x4096,8192x8192x2048,2048x2048x2048 >"$OUT/simt_lab.log" 2>&1
echo "lab rc=$?"; grep -E "^\||Error|Traceback" "$OUT/simt_lab.log" | cut -c1-300
l=$(left)
echo "=== ncu simt stalls (${l}s left)"
M=smsp__average_warps_issue_stalled
METRICS=gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
for r in barrier short_scoreboard long_scoreboard mio_throttle math_pipe_throttle wait not_selected dispatch_stall \
  no_instruction lg_throttle selected branch_resolving drain imc_miss membar sleeping tex_throttle; do
  METRICS="$METRICS,${M}_${r}_per_issue_active.ratio"
done
for v in "" bk32; do
  JK_MATMUL_SIMT=$v timeout -k 5 $(( $(left) > 150 ? 90 : $(left) / 2 )) "$NCU" --clock-control none \
    -k regex:SimtRegisterBlocked -c 1 --metrics "$METRICS" python3 "$REPO/bench/lab/s13_ncu.py" simt \
    >"$OUT/ncu_stalls_${v:-bk16}.log" 2>&1
  echo "ncu ${v:-bk16} rc=$?"; grep -E "SimtRegisterBlocked|gpu__time|issue_active|registers|stalled" \
    "$OUT/ncu_stalls_${v:-bk16}.log" | sed 's/smsp__average_warps_issue_stalled_//' | awk '{$1=$1};1' | cut -c1-120
done
