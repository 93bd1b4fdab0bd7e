#!/usr/bin/env bash
# Session 19, device call 1 (H200): build (sm_90a); the SkinnyMma tests with the pipelined rounds forced
# (JK_MATMUL_SKINNY_PIPELINED=1|2 at clusters of 2 / 1), then the decode lab (bench/lab/s19_decode_lab.py).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
for v in "2 2" "1 2" "2 1"; do
  set -- $v
  echo "=== skinny tests, pipelined $1, cluster $2 ($(left)s left)"
  JK_MATMUL_SKINNY_PIPELINED=$1 JK_MATMUL_SKINNY_CLUSTER=$2 timeout -k 5 100 python3 -m pytest -q -x -n 8 \
    -p no:cacheprovider -o addopts= "$REPO/tests/test_matmul.py" -k "skinny and mma" 2>&1 | tail -4 | cut -c1-300
done
l=$(left)
echo "=== decode lab ($l s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s19_decode_lab.py" \
  2>&1 | tee "$OUT/decode_lab.log" | grep -E "^\||device|FAILED|Error" | head -70
