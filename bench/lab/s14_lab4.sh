#!/usr/bin/env bash
# Session 14, device call 6 (H200): build (sm_90a); the norm tests that reach the cluster tier with
# JK_NORM_SMEM_SCALE=1 (the scale copied once into shared memory per persistent CTA); then the long-rows lab,
# default against the scale in shared memory and jnp (softmax_long_lab.py --smem14). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
l=$(left)
echo "=== norm tests with JK_NORM_SMEM_SCALE=1 (${l}s left)"
JK_NORM_SMEM_SCALE=1 JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 200 python3 -m pytest -q -n 8 \
  -p no:cacheprovider -o addopts= -m "not large" -k "norm" "$REPO/tests/test_softmax_long.py" "$REPO/tests/test_norms.py" \
  >"$OUT/tests_smem.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_smem.log" | tail -8 | cut -c1-300
l=$(left)
echo "=== long-rows lab (${l}s left)"
timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/softmax_long_lab.py" --smem14 --budget $(( l - 40 )) \
  --case rms_norm:bfloat16:65536 --case layer_norm:bfloat16:65536 --case layer_norm:float32:32768 \
  --case layer_norm:float32:65536 --case rms_norm:float16:65536 --case layer_norm:float16:65536 \
  >"$OUT/long_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/long_lab.log" | grep -E "jnp|Error|Trace|budget" | cut -c1-250
