#!/usr/bin/env bash
# Session 19: build (sm_90a); bench/gpu_check.sh test-norm; RMSNorm float32 under the new rule (two reads below
# 28672 columns) with norm_sweep.py --cols 20480,24576,28672; then 49152 columns under the hybrid's alternatives, each
# in a process of its own (two reads: JK_NORM_HYBRID=0 JK_NORM_LONG=off; the cluster tier of 256-thread CTAs:
# JK_NORM_CLUSTER="16383 -1 256"). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-585}
l=$(left)
echo "=== test-norm (${l}s left)"
OUT=$OUT JK_LARGE_TESTS=0 JK_TEST_TIMEOUT=$(( l - 250 )) timeout -k 5 $(( l - 240 )) \
  bash "$REPO/bench/gpu_check.sh" test-norm 2>&1 | grep -E "passed|failed|FAILED|ERROR|exit|Timeout" | tail -15 | cut -c1-300
sweep() {  # name cols
  local l; l=$(left)
  echo "=== sweep $1 at $2 ($l s left)"
  timeout -k 5 $(( l - 5 )) python3 "$REPO/bench/lab/norm_sweep.py" --cols "$2" --deadline 20 >"$OUT/rms_$1.txt" 2>&1
  echo "rc=$?"; sed -n '/==== norm sweep summary/,$p' "$OUT/rms_$1.txt" | grep -E "rms_norm +f32|ceiling"
}
sweep default 20480,24576,28672,49152
JK_NORM_HYBRID=0 JK_NORM_LONG=off sweep tworeads 49152
JK_NORM_CLUSTER="16383 -1 256" sweep cluster256 49152
