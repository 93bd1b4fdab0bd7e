#!/usr/bin/env bash
# Session 7, one device call (~330 s; give the call a 600 s timeout). Logs under $OUT.
#  1. build (sm_90a);
#  2. tile widths under the 128-byte L2 promotion for rows off 128-byte boundaries (bench/lab/matmul_pitch_lab.py):
#     whether 128x64 tiles now pay off with N off a multiple of 64 (1000^3);
#  3. the matmul tests.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-420}
l=$(left)
echo "=== width lab (${l}s left)"
timeout -k 5 100 python3 "$REPO/bench/lab/matmul_pitch_lab.py" --budget 75 --shapes \
  1000x1000x1000,1024x1000x1024,1024x1024x1000,1000x1024x1024,768x1000x768,2000x2000x2000,4096x1000x4096,4000x1000x4000,4096x1088x4096,3000x3000x3000 \
  >"$OUT/width2_lab.log" 2>&1
echo "lab rc=$?"
grep -E "^(\||device|Trace|[A-Za-z]+Error)" "$OUT/width2_lab.log" | cut -c1-300
timeout -k 5 40 python3 "$REPO/bench/lab/matmul_pitch_lab.py" --budget 25 --linear --shapes 1000x1000x1000 \
  >"$OUT/width2_lab_linear.log" 2>&1
grep -E "^\| linear|Trace|[A-Za-z]+Error" "$OUT/width2_lab_linear.log" | cut -c1-300
l=$(left)
echo "=== matmul tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 10 )) python3 -m pytest -q -n 8 -p no:cacheprovider \
  -o addopts= "$REPO/tests/test_matmul.py" "$REPO/tests/test_linear_epilogue.py" >"$OUT/tests_matmul.log" 2>&1
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_matmul.log" | tail -15 | cut -c1-300
