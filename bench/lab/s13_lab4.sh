#!/usr/bin/env bash
# As run: on lab builds whose JK_MATMUL_SIMT=ahead2 variant was reverted after call 4 (no gain); the knob is gone.
# Session 13, device call 4 (H200): build (sm_90a); the exact float32 matmul tests with JK_MATMUL_SIMT=ahead2 among
# their variants; default against ahead2 with one copy of the math and jnp (simt_swizzle_lab.py); Nsight Compute
# stall reasons of ahead2 at 4096^3 (clocks untouched). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
l=$(left)
echo "=== float32 pipeline tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 120 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
  -k "float32_pipeline" "$REPO/tests/test_matmul.py" >"$OUT/tests_f32.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_f32.log" | tail -6 | cut -c1-300
l=$(left)
echo "=== simt lab (${l}s left)"
timeout -k 5 150 python3 "$REPO/bench/lab/simt_swizzle_lab.py" --variants "bk16=,ahead2=ahead2" \
  --shapes 4096x4096x4096,8192x8192x2048,2048x2048x2048,4096x4096x1024 >"$OUT/simt_lab.log" 2>&1
echo "lab rc=$?"; grep -E "^\||Error|Traceback" "$OUT/simt_lab.log" | cut -c1-300
l=$(left)
echo "=== ncu ahead2 stalls (${l}s left)"
M=smsp__average_warps_issue_stalled
METRICS=gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
for r in barrier short_scoreboard long_scoreboard mio_throttle wait not_selected dispatch_stall no_instruction; do
  METRICS="$METRICS,${M}_${r}_per_issue_active.ratio"
done
JK_MATMUL_SIMT=ahead2 timeout -k 5 90 "$NCU" --clock-control none -k regex:SimtRegisterBlocked -c 1 --metrics "$METRICS" \
  python3 "$REPO/bench/lab/s13_ncu.py" simt >"$OUT/ncu_stalls_ahead2.log" 2>&1
echo "ncu rc=$?"; grep -E "SimtRegisterBlocked|gpu__time|issue_active|registers|stalled" "$OUT/ncu_stalls_ahead2.log" \
  | sed 's/smsp__average_warps_issue_stalled_//' | awk '{$1=$1};1' | cut -c1-120
