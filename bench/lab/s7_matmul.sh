#!/usr/bin/env bash
# Session 7, one device call (~400 s; give the call a 600 s timeout). Logs under $OUT.
#  1. build (sm_90a);
#  2. the Hopper matmul tier's tile widths (128x64 new, 128x128, 128x256) against its default (the wave rule)
#     and jnp on bf16 shapes around one wave, aligned and not (bench/lab/matmul_pitch_lab.py); fused linear;
#  3. the matmul and linear tests (tests/test_matmul.py, tests/test_linear_epilogue.py), width variants included.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-420}
l=$(left)
echo "=== width lab (${l}s left)"
timeout -k 5 150 python3 "$REPO/bench/lab/matmul_pitch_lab.py" --budget 120 --shapes \
  512x512x512,768x768x768,1000x1000x1000,1024x1024x1024,512x1024x1024,1024x1024x4096,2048x2048x512,2000x2000x2000,2048x2048x2048,3000x3000x3000,3072x3072x3072,4000x1000x4000,1000x4000x4000,4096x4096x4096,8192x1000x8192,16384x1024x4096 \
  >"$OUT/width_lab.log" 2>&1
echo "lab rc=$?"
grep -E "^(\||device|Trace|[A-Za-z]+Error)" "$OUT/width_lab.log" | cut -c1-300
timeout -k 5 60 python3 "$REPO/bench/lab/matmul_pitch_lab.py" --budget 40 --linear \
  --shapes 1000x1000x1000,1024x1024x1024,4096x4096x4096 >"$OUT/width_lab_linear.log" 2>&1
echo "linear lab rc=$?"
grep -E "^\| linear|Trace|[A-Za-z]+Error" "$OUT/width_lab_linear.log" | cut -c1-300
matmul_tests
