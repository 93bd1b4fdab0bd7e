#!/usr/bin/env bash
# Session 20, prepared for the next session (no device time was left), with bench/lab/s20_push.patch applied (H200): build (sm_90a); the decode and split-K tests (SkinnyPipe's push reduction; the
# wgmma split-K's exchange helpers moved to common/bulk_copy.cuh); then bench/lab/s20_push_lab.py.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-400}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= "$REPO/tests/test_matmul.py" \
  "$REPO/tests/test_linear_epilogue.py" -k "skinny or pipe or splitk or split_k or decode" >"$OUT/tests_push.log" 2>&1
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_push.log" | tail -15 | cut -c1-300
l=$(left)
echo "=== push lab ($l s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s20_push_lab.py" \
  2>&1 | tee "$OUT/push_lab.log" | grep -E "^\||device|FAILED|Error" | head -40
