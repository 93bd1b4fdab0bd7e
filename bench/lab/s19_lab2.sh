#!/usr/bin/env bash
# Session 19, device call 5 (H200): build (sm_90a); the split-K float32 tests with JK_MATMUL_SIMT_DEPTH=2 and 4,
# then bench/lab/s19_simt_lab.py.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-500}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
for d in 2 4; do
  echo "=== split-K tests, depth $d ($(left)s left)"
  JK_MATMUL_SIMT_DEPTH=$d timeout -k 5 120 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
    "$REPO/tests/test_matmul.py" -k "float32_split_k" 2>&1 | tail -4 | cut -c1-300
done
l=$(left)
echo "=== simt lab ($l s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s19_simt_lab.py" \
  2>&1 | tee "$OUT/simt_lab.log" | grep -E "^\||device|FAILED|Error" | head -40
