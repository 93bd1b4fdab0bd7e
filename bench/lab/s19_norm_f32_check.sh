#!/usr/bin/env bash
# Session 19: build (sm_90a); tests/test_norms.py rows (default dispatch); then bench/lab/norm_sweep.py --cols at
# float32 LayerNorm's new rule (BlockPerRowRegistersTwoPerSm for 1025-16383 columns but 4096 / 8192), twice in
# processes of their own: the default, then JK_NORM_TIER=legacy (the float32 dispatch before it), then the
# default again. Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
echo "=== norm row tests ($(left)s left)"
JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 150 python3 -m pytest -q -p no:cacheprovider \
  -o addopts="" -n 8 -k "rows" "$REPO/tests/test_norms.py" >"$OUT/tests_rows.log" 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_rows.log" | tail -8 | cut -c1-300
C=${JK_COLS:-1536,2048,2560,3072,4096,5120,6144,12288}
for run in default legacy default2; do
  l=$(left)
  echo "=== sweep $run at $C ($l s left)"
  if [ "$run" = legacy ]; then export JK_NORM_TIER=legacy; else unset JK_NORM_TIER; fi
  timeout -k 5 $(( l / 2 )) python3 "$REPO/bench/lab/norm_sweep.py" --cols "$C" --deadline 60 >"$OUT/sweep_$run.txt" 2>&1
  echo "rc=$?"; sed -n '/==== norm sweep summary/,$p' "$OUT/sweep_$run.txt" | grep -E "layer_norm f32|ceiling"
done
