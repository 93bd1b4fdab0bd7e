#!/usr/bin/env bash
# Session 35, call 14 (H200, no package build): bench/lab/s35_jaxbuf_lab.py over .dev/s35jaxbuf.so (built on the CPU
# machine from bench/lab/s35_jaxbuf_lab.cu): our copies and an x * c clone on JAX's buffers and on cudaMalloc ones.
#   bash bench/lab/s35_call14.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd /tmp && XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 240 python3 "$REPO/bench/lab/s35_jaxbuf_lab.py" \
  "$REPO/.dev/s35jaxbuf.so" 2>&1 | grep -vE "^(WARNING|I0000|W0000)" | tee "$OUT/jaxbuf_lab.txt"
