#!/usr/bin/env bash
# Session 21 (H200): build (sm_90a); the fused-epilogue tests (tmal, tmarl: the loop forms; the many-tiles cases);
# then bench/lab/s21_linear_lab.py (the activation tails skipped: "4096,1000,3000" filters the cases).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-400}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
  "$REPO/tests/test_linear_epilogue.py" -k "default or tmarl or tmal or tma0 or pingpong" >"$OUT/tests_lin.log" 2>&1
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_lin.log" | tail -15 | cut -c1-300
l=$(left)
echo "=== linear lab ($l s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s21_linear_lab.py" 4096,1000,3000,3072 \
  2>&1 | tee "$OUT/linear_lab.log" | grep -E "^\||device|FAILED|Error" | head -90
