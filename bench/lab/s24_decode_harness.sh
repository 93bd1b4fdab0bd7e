#!/usr/bin/env bash
# Prepared in session 23 for the next (not run; H200): why does the benchmark time the decode case (bf16
# 8x4096x4096) 0.4-0.5 us slower than the labs on the same kernel (session 23: 9.0 against 8.5-8.6 us;
# bench/lab/s23_h200.md calls 13-15)? Same machine, one call: the benchmark's matmul cases alone (default 10 calls,
# then 20), the benchmark's decode case alone, and the lab (bench/lab/s23_cmdbuf_lab.py, command buffers off).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-500}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
for args in "--ops matmul" "--ops matmul --iterations 20" "--ops matmul --dtypes bfloat16"; do
  echo "=== bench $args ($(left)s left)"
  # shellcheck disable=SC2086  # args is split on purpose
  timeout 150 python3 -m jax_kernels.bench --full --no-progress $args 2>&1 | grep -E "M=8 |M=1000 |copy ceiling" | head -6
done
echo "=== lab ($(left)s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout 120 python3 "$REPO/bench/lab/s23_cmdbuf_lab.py" 2>&1 | grep -E "^\|" | head -8
