#!/usr/bin/env bash
# Session 15, device call 2 (H200): Nsight Compute (clocks and caches untouched) on s15_ncu.py's cases, ours and
# jnp's kernels. Call 1's profile crashed (segfault) in XLA's gemm autotuning under ncu: run once to fill an
# autotune cache, then profile with it (session 7's way).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-300}
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS="--xla_gpu_per_fusion_autotune_cache_dir=/tmp/jk_atc"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout -k 5 90 python3 "$REPO/bench/lab/s15_ncu.py" >"$OUT/ncu_warm.log" 2>&1
echo "warm rc=$?"
l=$(left)
echo "=== ncu (${l}s left)"
METRICS="$(ncu_base_metrics),lts__t_bytes.sum,launch__block_size,lts__t_sector_hit_rate.pct"
METRICS="$METRICS,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__shared_mem_per_block_dynamic"
METRICS="$METRICS,$(ncu_stall_metrics barrier short_scoreboard long_scoreboard mio_throttle lg_throttle wait \
  not_selected no_instruction membar)"
timeout -k 5 $(( l - 10 )) "$NCU" --clock-control none --cache-control none --metrics "$METRICS" \
  python3 "$REPO/bench/lab/s15_ncu.py" >"$OUT/ncu.log" 2>&1
echo "ncu rc=$?"; grep -E "^  [a-zA-Z]|ran |==ERR|Error" "$OUT/ncu.log" | cut -c1-150 | head -150
