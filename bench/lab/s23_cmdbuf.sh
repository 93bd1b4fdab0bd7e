#!/usr/bin/env bash
# Session 23, call 15 (H200): does the benchmark's default (XLA command buffers on) change the decode figures? The
# benchmark run (call 13) had bf16 8x4096x4096 at 9.0 us (jnp 7.2), the labs (command buffers off) 8.5-8.6 (jnp
# 7.3-7.6). bench/lab/s23_cmdbuf_lab.py under both settings, one process each.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-400}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== command buffers off"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout 120 python3 "$REPO/bench/lab/s23_cmdbuf_lab.py" 2>&1 | tee "$OUT/lab_off.log" | grep -E "^\||device"
echo "=== command buffers default"
timeout 120 python3 "$REPO/bench/lab/s23_cmdbuf_lab.py" 2>&1 | tee "$OUT/lab_on.log" | grep -E "^\||device"
