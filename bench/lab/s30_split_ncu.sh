#!/usr/bin/env bash
# Session 30 (H200, one call): build, then Nsight Compute over bench/lab/s30_split_ncu.py (the split tier's kernels and
# jnp's at two long-axis shapes): time, DRAM traffic, occupancy, issue activity and stall reasons per kernel.
#   JK_TOTAL_S=400 bash bench/lab/s30_split_ncu.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 400
M="$(ncu_base_metrics),sm__cycles_active.avg,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem"
M="$M,$(ncu_stall_metrics long_scoreboard short_scoreboard wait barrier lg_throttle mio_throttle not_selected)"
ncu_run "$REPO/bench/lab/s30_split_ncu.py" "$M"
