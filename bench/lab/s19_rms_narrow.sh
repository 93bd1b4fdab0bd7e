#!/usr/bin/env bash
# Session 19: build (sm_90a); bench/gpu_check.sh test-norm; RMSNorm float32 with the hybrid tier's occupancy-aware
# span (CTAs of up to 256 threads where they keep more threads resident: 49152 columns) against jnp,
# norm_sweep.py --cols. Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-585}
l=$(left)
echo "=== test-norm (${l}s left)"
OUT=$OUT JK_LARGE_TESTS=0 JK_TEST_TIMEOUT=$(( l - 200 )) timeout -k 5 $(( l - 190 )) \
  bash "$REPO/bench/gpu_check.sh" test-norm 2>&1 | grep -E "passed|failed|FAILED|ERROR|exit|Timeout" | tail -15 | cut -c1-300
for run in a b; do
  l=$(left)
  echo "=== sweep $run ($l s left)"
  timeout -k 5 $(( l - 5 )) python3 "$REPO/bench/lab/norm_sweep.py" --cols ${JK_COLS:-32768,40960,49152,57344,65536} \
    --deadline 20 >"$OUT/rms_narrow_$run.txt" 2>&1
  echo "rc=$?"; sed -n '/==== norm sweep summary/,$p' "$OUT/rms_narrow_$run.txt" | grep -E "rms_norm +f32|ceiling"
done
