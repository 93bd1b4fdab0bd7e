#!/usr/bin/env bash
# Session 17, final call 2 (~590 s): build (sm_90a); issue 6's linear lab for the two benchmark cases and the
# activation tails (errors against float64 for every epilogue form, bench/lab/matmul_linear_lab.py); then the
# test suite without the matmul files and without the `large` tests (bench/gpu_check.sh test-rest). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-588}
echo "=== linear lab ($(left)s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 120 python3 "$REPO/bench/lab/matmul_linear_lab.py" \
  "bf16 4096^3 +bias gelu,tail" >"$OUT/linear_lab.txt" 2>&1
echo "lab rc=$?"; grep -E "^\||FAILED" "$OUT/linear_lab.txt" | head -40
l=$(left)
echo "=== test-rest (${l}s left)"
OUT=$OUT JK_LARGE_TESTS=0 JK_TEST_TIMEOUT=$(( l - 12 )) timeout -k 5 $(( l - 6 )) \
  bash "$REPO/bench/gpu_check.sh" test-rest 2>&1 | grep -E "passed|failed|FAILED|ERROR|exit|Timeout" | tail -15 | cut -c1-300
