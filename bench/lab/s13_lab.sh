#!/usr/bin/env bash
# Session 13, device call 1: build (sm_90a); the bf16-vs-f16 data lab (s13_bf16_lab.py); Nsight Compute on the
# exact float32 matmul at 4096^3 and on log_softmax 49152 x 128 bf16 / f16 (s13_ncu.py). Clocks untouched
# (--clock-control none). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
l=$(left)
echo "=== bf16 lab (${l}s left)"
timeout -k 5 200 python3 "$REPO/bench/lab/s13_bf16_lab.py" >"$OUT/bf16_lab.log" 2>&1
echo "lab rc=$?"; grep -E "^\||Error|Traceback" "$OUT/bf16_lab.log" | cut -c1-300
l=$(left)
echo "=== ncu simt (${l}s left)"
timeout -k 5 150 "$NCU" --clock-control none -k regex:SimtRegisterBlocked -c 1 --section SpeedOfLight \
  --section WarpStateStats --section SchedulerStats --section InstructionStats --section LaunchStats \
  --section Occupancy --section MemoryWorkloadAnalysis python3 "$REPO/bench/lab/s13_ncu.py" simt >"$OUT/ncu_simt.log" 2>&1
echo "ncu rc=$?"; grep -vE "^==PROF==|^\s*$|----" "$OUT/ncu_simt.log" | grep -E "  [A-Za-z]" | cut -c1-150 | head -120
l=$(left)
echo "=== ncu warp128 (${l}s left)"
timeout -k 5 100 "$NCU" --clock-control none -k regex:WarpRowsKernel -c 4 --section SpeedOfLight \
  --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis --section LaunchStats \
  python3 "$REPO/bench/lab/s13_ncu.py" warp128 >"$OUT/ncu_warp.log" 2>&1
echo "ncu rc=$?"; grep -E "WarpRowsKernel|Duration|Throughput|Executed Ipc|Issue Slots|Instructions|Stall|Hit Rate|Registers|Achieved Occ" "$OUT/ncu_warp.log" | cut -c1-150 | head -80
