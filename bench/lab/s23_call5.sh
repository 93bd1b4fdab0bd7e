#!/usr/bin/env bash
# Session 23, call 5 (H200): build, the matmul test files (gpu_check's test-matmul stage), then
# bench/lab/s23_final_lab.py. Logs: $OUT/build.log, tests.log, lab.log.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
mkdir -p "$OUT"
T0=$(date +%s)
JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} JK_TEST_TIMEOUT=330 JK_LARGE_TEST_TIMEOUT=90 OUT=$OUT \
  bash "$REPO/bench/gpu_check.sh" build test-matmul 2>&1 | tail -30
left=$(( 585 - ($(date +%s) - T0) ))
echo "=== lab (${left}s left)"
cd /tmp
XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( left - 5 )) \
  python3 "$REPO/bench/lab/s23_final_lab.py" 2>&1 | tee "$OUT/lab.log" | grep -E "^\||device|FAILED|Error" | head -90
