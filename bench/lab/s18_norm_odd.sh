#!/usr/bin/env bash
# Session 18, device call 11 (~450 s): build (sm_90a); the norm test files (bench/gpu_check.sh test-norm); then
# LayerNorm / RMSNorm against jnp at 192, 384, 768 and 1536 columns (bench/lab/norm_sweep.py --cols, CUPTI, the
# benchmark's method), the rows that the packed short-row tier now takes with 3 or 6 packs per lane. Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-588}
l=$(left)
echo "=== test-norm (${l}s left)"
OUT=$OUT JK_LARGE_TESTS=0 JK_TEST_TIMEOUT=$(( l - 100 )) timeout -k 5 $(( l - 95 )) \
  bash "$REPO/bench/gpu_check.sh" test-norm 2>&1 | grep -E "passed|failed|FAILED|ERROR|exit|Timeout" | tail -15 | cut -c1-300
l=$(left)
echo "=== norm sweep at 192, 384, 768, 1536 columns (${l}s left)"
timeout -k 5 $(( l - 5 )) python3 "$REPO/bench/lab/norm_sweep.py" --cols 192,384,768,1536 >"$OUT/norm_odd.txt" 2>&1
echo "sweep rc=$?"; sed -n '/==== norm sweep summary/,$p' "$OUT/norm_odd.txt" | head -30
