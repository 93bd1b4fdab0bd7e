#!/usr/bin/env bash
# Prepared in session 22, run in session 23 (H200, no build needed): dump XLA's compiled modules for f32 HIGHEST
# 512x512x256 and bf16 1000^3 (bench/lab/s23_xla_dump.py) and bring the dump back ($OUT/xla_dump.tar.gz).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
mkdir -p "$OUT/xla_dump"
cd /tmp
XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS="--xla_dump_to=$OUT/xla_dump --xla_dump_hlo_as_text" \
  timeout -k 5 120 python3 "$REPO/bench/lab/s23_xla_dump.py" "$OUT/xla_dump" 2>&1 | tail -20
tar -C "$OUT" -czf "$OUT/xla_dump.tar.gz" xla_dump && rm -rf "$OUT/xla_dump"
