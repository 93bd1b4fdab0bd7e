#!/usr/bin/env bash
# Session 41, call 9 (H200): call 8 (s41_call8.sh) with S41_WIDE2's tier tokens (pwarp 64 B, pblock 64; float32
# block 8 64 1 / 2) for LayerNorm at 2048 columns.
#   bash bench/lab/s41_call9.sh    (needs .dev/s39ptx.so)
S41_WIDE2=1 exec bash "$(dirname "$0")/s41_call8.sh"
