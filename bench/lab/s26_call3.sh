#!/usr/bin/env bash
# Session 26, call 3 (H200): bench/gpu_check.sh build test-matmul bench (the final figures), then
# S26_LAB=2 bench/lab/s26_simt_lab.py (the exact float32 split-K shapes, ours twice against jnp).
REPO=$(cd "$(dirname "$0")/../.." && pwd)
T0=$(date +%s)
JK_CUDA_ARCHS=90a-real JK_TEST_TIMEOUT=${JK_TEST_TIMEOUT:-200} JK_BENCH_TIMEOUT=${JK_BENCH_TIMEOUT:-250} OUT=$OUT \
  bash "$REPO/bench/gpu_check.sh" build test-matmul bench
echo "gpu_check rc=$? after $(( $(date +%s) - T0 ))s"
cd /tmp || exit 1
l=$(( ${JK_TOTAL_S:-580} - ($(date +%s) - T0) ))
echo "=== s26_simt_lab ($l s left)"
[ "$l" -gt 40 ] && S26_LAB=2 XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer= \
  timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s26_simt_lab.py" 2>&1 | tee "$OUT/s26_simt_lab.log" \
  | grep -E "^\||device|FAILED|Error" | awk 'NR <= 40'
