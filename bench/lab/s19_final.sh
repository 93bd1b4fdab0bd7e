#!/usr/bin/env bash
# Session 19, the final check of float32 LayerNorm's capped register tier: build (sm_90a); the norm test files
# (bench/gpu_check.sh test-norm); bench/lab/norm_sweep.py --cols in processes of their own, the default and
# JK_NORM_TIER=legacy (the float32 dispatch before the change). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-585}
l=$(left)
echo "=== test-norm (${l}s left)"
OUT=$OUT JK_LARGE_TESTS=0 JK_TEST_TIMEOUT=$(( l - 200 )) timeout -k 5 $(( l - 190 )) \
  bash "$REPO/bench/gpu_check.sh" test-norm 2>&1 | grep -E "passed|failed|FAILED|ERROR|exit|Timeout" | tail -15 | cut -c1-300
C=${JK_COLS:-1536,2048,2560,3072,5120,8200,10240,12288,14336}
for run in default legacy; do
  l=$(left)
  echo "=== sweep $run at $C ($l s left)"
  if [ "$run" = legacy ]; then export JK_NORM_TIER=legacy; else unset JK_NORM_TIER; fi
  timeout -k 5 $(( l - 5 )) python3 "$REPO/bench/lab/norm_sweep.py" --cols "$C" --deadline 60 >"$OUT/sweep_$run.txt" 2>&1
  echo "rc=$?"; sed -n '/==== norm sweep summary/,$p' "$OUT/sweep_$run.txt" | grep -E "layer_norm f32|ceiling"
done
