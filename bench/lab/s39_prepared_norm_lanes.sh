#!/usr/bin/env bash
# Prepared in session 39, run in session 40 (call 1, bench/lab/s40_h200.md): XLA's Triton layouts for the short norm rows still under jnp
# (LayerNorm 16-bit 128 columns, float32 32 columns), rebuilt in CUDA (bench/lab/s39_norm_ptx_lab.cu's LnLanes), beside
# jnp and XLA's own kernel as our custom call; no package build (S39_NO_PACKAGE=1). Build the PTX and the FFI library on
# the CPU machine first and carry them (.dev/s39_norm_lab.ptx, .dev/s39ptx.so; commands in the two sources' heads).
#   bash bench/lab/s39_prepared_norm_lanes.sh [CASE ...]
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
mkdir -p "$OUT"
cd /tmp
S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s39_norm_lab.ptx XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 300 \
  python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" "$REPO/.dev/s39ptx.so" ${@:-ln_bf16_128 ln_f16_128 ln_f32_32} 2>&1 \
  | grep -vE "^(WARNING|I0000|W0000)" | tee "$OUT/s39_xla_ptx_lab.txt"
