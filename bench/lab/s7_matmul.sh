#!/usr/bin/env bash
# Session 7, one device call (~400 s; give the call a 600 s timeout). Logs under $OUT.
#  1. build (sm_90a);
#  2. the Hopper matmul tier's cp.async loads against its TMA loads on bf16 shapes whose rows do not start on
#     128-byte boundaries, with aligned controls (bench/lab/matmul_pitch_lab.py); fused linear on a few;
#  3. the matmul and linear tests (tests/test_matmul.py, tests/test_linear_epilogue.py), cp.async variants
#     included.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-420}
l=$(left)
echo "=== pitch lab (${l}s left)"
timeout -k 5 160 python3 "$REPO/bench/lab/matmul_pitch_lab.py" --budget 130 >"$OUT/pitch_lab.log" 2>&1
echo "lab rc=$?"
grep -E "^(\||device|Trace|[A-Za-z]+Error)" "$OUT/pitch_lab.log" | cut -c1-300
timeout -k 5 60 python3 "$REPO/bench/lab/matmul_pitch_lab.py" --budget 40 --linear \
  --shapes 4096x4096x4096,4000x1000x4000,3000x3000x3000 >"$OUT/pitch_lab_linear.log" 2>&1
echo "linear lab rc=$?"
grep -E "^(\||Trace|[A-Za-z]+Error)" "$OUT/pitch_lab_linear.log" | cut -c1-300
l=$(left)
echo "=== matmul tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 10 )) python3 -m pytest -q -n 8 -p no:cacheprovider \
  -o addopts= "$REPO/tests/test_matmul.py" "$REPO/tests/test_linear_epilogue.py" >"$OUT/tests_matmul.log" 2>&1
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_matmul.log" | tail -15 | cut -c1-300
