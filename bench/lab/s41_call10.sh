#!/usr/bin/env bash
# Session 41, call 10 (H200): call 7's steps (s41_call7.sh) over the final kernels (call 7's + LayerNorm 2048: 16-bit
# E = 64, float32 block 8 x 64): build, the norm tests in full, the full benchmark.
#   bash bench/lab/s41_call10.sh
exec bash "$(dirname "$0")/s41_call7.sh"
