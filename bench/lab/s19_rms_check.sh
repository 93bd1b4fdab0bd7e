#!/usr/bin/env bash
# Session 19: RMSNorm float32 past 16384 columns, the hybrid tier (default) against the tiers without it
# (JK_NORM_HYBRID=0: two reads, or the ring at 32769-65536), each in a process of its own
# (bench/lab/norm_sweep.py --cols, CUPTI against jnp). Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
C=${JK_COLS:-20480,24576,28672,40960,49152,57344}
for run in default nohybrid; do
  l=$(left)
  echo "=== sweep $run at $C ($l s left)"
  if [ "$run" = nohybrid ]; then export JK_NORM_HYBRID=0; else unset JK_NORM_HYBRID; fi
  timeout -k 5 $(( l - 5 )) python3 "$REPO/bench/lab/norm_sweep.py" --cols "$C" --deadline 30 >"$OUT/rms_$run.txt" 2>&1
  echo "rc=$?"; sed -n '/==== norm sweep summary/,$p' "$OUT/rms_$run.txt" | grep -E "rms_norm +f32|ceiling"
done
