#!/usr/bin/env bash
# Session 16, device call 10 (H200): build (sm_90a); Nsight Compute (clocks and caches untouched; SpeedOfLight and
# memory sections) on the Hopper tier at bf16 4096^3: cooperative plain, ping-pong plain, ping-pong linear + gelu.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-330}
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
l=$(left)
echo "=== ncu (${l}s left)"
METRICS="gpu__time_duration.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum"
METRICS="$METRICS,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed"
METRICS="$METRICS,sm__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum"
METRICS="$METRICS,sm__cycles_elapsed.avg.per_second,smsp__issue_active.avg.pct_of_peak_sustained_active"
timeout -k 5 $(( l - 10 )) "$NCU" --clock-control none --cache-control none -k regex:Wgmma -c 3 --metrics "$METRICS" \
  python3 "$REPO/bench/lab/s16_ncu3.py" >"$OUT/ncu.log" 2>&1
echo "ncu rc=$?"; grep -E "^  [a-zA-Z]|ran |==ERR|Error" "$OUT/ncu.log" | cut -c1-150 | head -60
