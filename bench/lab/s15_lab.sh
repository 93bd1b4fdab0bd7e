#!/usr/bin/env bash
# Session 15, device call 1 (H200): build (sm_90a); the packed short-row tier now written for float32 too
# (norm_short_packed.cuh): the row tests and the many-rows test under each forced packs-per-lane setting, then the
# short-row lab at float32 32 / 128 columns (and bf16 32 for the baseline); Nsight Compute (clocks and caches
# untouched) on the decode matmul, bf16 norms at 32 columns and the 2048x512 transpose, ours and jnp's kernels.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
for t in "packed 1" "packed 2" "packed 4"; do
  echo "=== tests under JK_NORM_TIER='$t' ($(left)s left)"
  JK_NORM_TIER="$t" timeout -k 5 120 python3 -m pytest -q -x -n 8 -p no:cacheprovider "$REPO/tests/test_norms.py" \
    -k "row" 2>&1 | tail -3
done
l=$(left)
echo "=== lab ($l s left)"
timeout -k 5 $(( l > 300 ? 200 : l / 2 )) python3 "$REPO/bench/lab/norm_short_lab.py" --cols 32,128 --dtypes f32 \
  --budget 150 2>&1 | tee "$OUT/lab.log" | grep -E "^\||ceiling|Error" | head -30
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
l=$(left)
echo "=== ncu (${l}s left)"
METRICS="$(ncu_base_metrics),lts__t_bytes.sum,launch__block_size,lts__t_sector_hit_rate.pct"
METRICS="$METRICS,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__shared_mem_per_block_dynamic"
METRICS="$METRICS,launch__cluster_dim_x,sm__cycles_elapsed.avg.per_second"
METRICS="$METRICS,$(ncu_stall_metrics barrier short_scoreboard long_scoreboard mio_throttle lg_throttle wait \
  not_selected no_instruction membar)"
timeout -k 5 $(( l - 10 )) "$NCU" --clock-control none --cache-control none --metrics "$METRICS" \
  python3 "$REPO/bench/lab/s15_ncu.py" >"$OUT/ncu.log" 2>&1
echo "ncu rc=$?"; grep -E "^  [a-zA-Z]|ran |==ERR|Error" "$OUT/ncu.log" | cut -c1-150 | head -60
