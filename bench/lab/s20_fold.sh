#!/usr/bin/env bash
# Session 20, device call 11 (H200): build (sm_90a); the fused-epilogue tests (the cooperative schedule's boxed
# epilogue now folds the bias into the accumulators); then bench/lab/s20_linear_lab.py with S20_LAB=fold
# (JK_MATMUL_WGMMA_COOP_FOLD=0: the bias in the epilogue, as before).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 200 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= "$REPO/tests/test_linear_epilogue.py" \
  "$REPO/tests/test_matmul.py" -k "linear" >"$OUT/tests_fold.log" 2>&1
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_fold.log" | tail -15 | cut -c1-300
l=$(left)
echo "=== linear lab ($l s left)"
S20_LAB=fold XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s20_linear_lab.py" \
  2>&1 | tee "$OUT/linear_lab.log" | grep -E "^\||device|FAILED|Error" | head -40
