#!/usr/bin/env bash
# Session 7, one device call (~330 s; give the call a 600 s timeout). Logs under $OUT.
#  1. build (sm_90a);
#  2. tile widths (bench/lab/matmul_pitch_lab.py), first run: whether 128x64 tiles pay off with N off a multiple
#     of 64 under the 128-byte L2 promotion (1000^3); second run: 128x64 tiles in multicast pairs (w64) against
#     without (w64mc0) on the small shapes;
#  3. the matmul tests.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-420}
l=$(left)
echo "=== width lab (${l}s left)"
timeout -k 5 100 python3 "$REPO/bench/lab/matmul_pitch_lab.py" --budget 75 --shapes \
  512x512x512,768x768x768,1000x1000x1000,1024x1024x1024,1024x1000x1024,1024x1024x1000,512x1024x1024,1024x1024x4096,768x1000x768,256x4096x4096,128x4096x4096,64x4096x4096,2048x1024x1024 \
  >"$OUT/width2_lab.log" 2>&1
echo "lab rc=$?"
grep -E "^(\||device|Trace|[A-Za-z]+Error)" "$OUT/width2_lab.log" | cut -c1-300
timeout -k 5 40 python3 "$REPO/bench/lab/matmul_pitch_lab.py" --budget 25 --linear --shapes 1000x1000x1000,1024x1024x1024 \
  >"$OUT/width2_lab_linear.log" 2>&1
grep -E "^\| linear|Trace|[A-Za-z]+Error" "$OUT/width2_lab_linear.log" | cut -c1-300
matmul_tests
