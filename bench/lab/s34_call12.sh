#!/usr/bin/env bash
# Session 34, prepared and not run (no device time left): build; Nsight Compute over bench/lab/s34_copy_ncu.py (XLA's x * c against our row copy,
# the permute and int8 8192^2 at the same bytes): where our copies lose 4-7 points of the ceiling to XLA's.
#   bash bench/lab/s34_call12.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
m="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed"
m="$m,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum"
m="$m,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size"
m="$m,launch__registers_per_thread,smsp__inst_executed.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg"
ncu_run "$REPO/bench/lab/s34_copy_ncu.py" "$m" | cut -c1-700
