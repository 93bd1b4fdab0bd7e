#!/usr/bin/env bash
# Session 20, device call 6 (H200): build (sm_90a); tests/test_matmul.py + test_linear_epilogue.py with the
# multicast pairs' default rule (pairs sharing a on 128x64 tiles where K % 16 == 8, sharing b on 128x256 tiles
# where N % 16 == 8); the lab's committed default against no pairs (S20_LAB=final).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
matmul_tests_t() {
  echo "=== matmul tests ($(left)s left)"
  timeout -k 5 240 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= "$REPO/tests/test_matmul.py" \
    "$REPO/tests/test_linear_epilogue.py" >"$OUT/tests_matmul.log" 2>&1
  echo "pytest rc=$?"
  grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_matmul.log" | tail -15 | cut -c1-300
}
matmul_tests_t
l=$(left)
echo "=== lab ($l s left)"
S20_LAB=final XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s20_pitch_lab.py" \
  2>&1 | tee "$OUT/final_lab.log" | grep -E "^\||device|FAILED|Error" | head -40
