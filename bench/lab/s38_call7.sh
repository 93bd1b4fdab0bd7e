#!/usr/bin/env bash
# Session 38, call 7 (H200): build; Nsight Compute over bench/lab/s38_ncu.py (ours and XLA's 2048x512 transposes side by
# side, no cache flush, clocks as the card runs them): duration, SM active cycles, L2 and DRAM traffic, instructions.
#   bash bench/lab/s38_call7.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
M="gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg,gpc__cycles_elapsed.max"
M="$M,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum"
M="$M,dram__bytes_write.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,smsp__inst_executed.sum"
M="$M,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
M="$M,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"
ncu_run "$REPO/bench/lab/s38_ncu.py" "$M" 2>&1 | grep -E "ncu rc|TiledRegister|Vec16|transpose|ran " | cut -c1-900 | tail -60
grep -E "^ran" "$OUT/ncu.err" "$OUT/ncu.csv" 2>/dev/null | head
