#!/usr/bin/env bash
# Session 15, device calls 4 and 5 (H200): build (sm_90a); SkinnyPipe with its copy index math hoisted out of the ring
# (call 5: with 32-column CTAs added)
# (matmul_decode.cuh): the SkinnyPipe tests (every width, cluster and ring depth), then the decode lab.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-400}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== matmul pipe tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -x -n 8 -p no:cacheprovider "$REPO/tests/test_matmul.py" -k "pipe or skinny" 2>&1 | tail -2
echo "=== norm row tests ($(left)s left)"
timeout -k 5 100 python3 -m pytest -q -x -n 8 -p no:cacheprovider "$REPO/tests/test_norms.py" -k "row" 2>&1 | tail -2
l=$(left)
echo "=== decode lab ($l s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s15_decode_lab.py" \
  2>&1 | tee "$OUT/decode_lab.log" | grep -E "^\||device|FAILED|Error" | head -60
