#!/usr/bin/env bash
# Session 39, call 1 (H200): build; XLA's own kernels launched as our custom call beside ours and jnp's
# (bench/lab/s39_xla_ptx_lab.py over .dev/s39ptx.so, built on the CPU machine from bench/lab/s39_ptx_ffi.cc).
#   bash bench/lab/s39_call1.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
echo "=== s39_xla_ptx_lab ($(left)s left)"
S39_PTX_OUT=$OUT/ptx XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" \
  "$REPO/.dev/s39ptx.so" "$@" 2>&1 | grep -vE "^(WARNING|I0000|W0000)" | tee "$OUT/s39_xla_ptx_lab.txt"
