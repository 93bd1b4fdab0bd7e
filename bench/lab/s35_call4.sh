#!/usr/bin/env bash
# Session 35, call 4 (H200, no package build): bench/lab/s35_copy_lab.cu (built on the CPU machine, carried as
# .dev/copylab): XLA's x * c cloned against linear copies and our transposes, outside JAX; then the PTX XLA emits for
# x * c (bench/lab/s35_xla_ptx.py).
#   bash bench/lab/s35_call4.sh   (call 4: CASES=fast, a row copy with multiply-high index math, 128 or 256 threads x 1 or 2 accesses)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
echo "=== copy lab"
CASES=fast timeout -k 5 240 "$REPO/.dev/copylab" 2>&1 | tee "$OUT/copy_lab.txt"
