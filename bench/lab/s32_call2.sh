#!/usr/bin/env bash
# Session 32, call 2 (H200): build; the lab of the default against the row-pairs form and its checked form
# (bench/lab/s31_lean_lab.py --more --variants def,pairs,pairs_nofull,jnp), padded rows included; then
# tests/test_softmax_long.py + tests/test_norms.py with JK_NORM_PAIRS=1 for every launch. Logs under $OUT.
#   bash bench/lab/s32_call2.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== lab ($(left)s left)"
timeout -k 5 200 python3 "$REPO/bench/lab/s31_lean_lab.py" --more --variants def,pairs,pairs_nofull,jnp \
  --out "$OUT/s32_pairs_lab2.txt" 2>&1 | tail -20
echo "=== tests with JK_NORM_PAIRS=1 ($(left)s left)"
JK_NORM_PAIRS=1 norm_long_tests $(( $(left) - 10 ))
