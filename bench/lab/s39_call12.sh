#!/usr/bin/env bash
# Session 39, call 12 (H200, no package build): LayerNorm bf16 49152 x 32: jnp, XLA's kernel as our custom call and
# bench/lab/s39_norm_ptx_lab.cu's steps from the Triton layout towards the package's one-pack kernel.
#   bash bench/lab/s39_call12.sh
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
mkdir -p "$OUT"
cd /tmp
S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s39_norm_lab.ptx XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 300 \
  python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" "$REPO/.dev/s39ptx.so" "${@:-ln_bf16_32}" 2>&1 \
  | grep -vE "^(WARNING|I0000|W0000)" | tee "$OUT/s39_xla_ptx_lab.txt"
