#!/usr/bin/env bash
# Session 21, call 2 (H200), with bench/lab/s21_warp_ring.patch applied (not kept): build (sm_90a); the SkinnyPipe
# tests (the per-warp ring variants warp1-3, warp1c1, warp2c8);
# then bench/lab/s21_warp_lab.py.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-400}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= "$REPO/tests/test_matmul.py" \
  "$REPO/tests/test_linear_epilogue.py" -k "pipe" >"$OUT/tests_warp.log" 2>&1
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_warp.log" | tail -15 | cut -c1-300
l=$(left)
echo "=== warp lab ($l s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s21_warp_lab.py" \
  2>&1 | tee "$OUT/warp_lab.log" | grep -E "^\||device|FAILED|Error" | head -40
