#!/usr/bin/env bash
# Session 7, one device call (~250 s): build; 128x64 tiles in multicast pairs (one arrival per warp) against
# without, on the small shapes (bench/lab/matmul_pitch_lab.py); the matmul tests. Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-420}
l=$(left)
echo "=== width lab (${l}s left)"
timeout -k 5 100 python3 "$REPO/bench/lab/matmul_pitch_lab.py" --budget 60 --shapes \
  512x512x512,1000x1000x1000,1024x1024x1024,1024x1024x4096,256x4096x4096,64x4096x4096,2048x1024x1024 \
  >"$OUT/mc_lab.log" 2>&1
echo "lab rc=$?"
grep -E "^(\||device|Trace|[A-Za-z]+Error)" "$OUT/mc_lab.log" | cut -c1-300
timeout -k 5 40 python3 "$REPO/bench/lab/matmul_pitch_lab.py" --budget 25 --linear --shapes 1000x1000x1000,1024x1024x1024 \
  >"$OUT/mc_lab_linear.log" 2>&1
grep -E "^\| linear|Trace|[A-Za-z]+Error" "$OUT/mc_lab_linear.log" | cut -c1-300
matmul_tests
