#!/usr/bin/env bash
# Session 16, device call 3 (H200): Nsight Compute (clocks and caches untouched) on the exact-float32 split-K
# kernel at 512x512x256 and 256x512x1024: time, issue activity, stall reasons per issued instruction.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-300}
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
l=$(left)
echo "=== ncu (${l}s left)"
METRICS="$(ncu_base_metrics),sm__cycles_elapsed.avg.per_second,smsp__cycles_active.avg,sm__cycles_elapsed.max"
METRICS="$METRICS,launch__cluster_dim_x,smsp__warps_active.avg.per_cycle_active,lts__t_sector_hit_rate.pct"
METRICS="$METRICS,$(ncu_stall_metrics barrier long_scoreboard short_scoreboard wait no_instruction mio_throttle \
  lg_throttle membar math_pipe_throttle dispatch_stall not_selected selected imc_miss branch_resolving drain)"
timeout -k 5 $(( l - 10 )) "$NCU" --clock-control none --cache-control none -k regex:Simt --metrics "$METRICS" \
  python3 "$REPO/bench/lab/s16_ncu2.py" >"$OUT/ncu.log" 2>&1
echo "ncu rc=$?"; grep -E "^  [a-zA-Z]|ran |==ERR|Error" "$OUT/ncu.log" | cut -c1-150 | head -150
