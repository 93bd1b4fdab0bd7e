#!/usr/bin/env bash
# Prepared in session 29 for the next session (H200, one call, ~250 s; not run): build, then Nsight Compute over
# bench/lab/s30_norm32_ncu.py (ours and XLA's kernels for the short norm rows the sweep still misses), with the
# benchmark's conditions: no cache flush (--cache-control none), clocks as the card runs them (--clock-control none).
# Per kernel: time, cycles active, instructions, occupancy, and the stall reasons per issued instruction. XLA's
# kernels are the *fusion* / *triton* names, ours are jk::norm::*. Log: $OUT/ncu.csv; a per-kernel digest printed.
#   JK_TOTAL_S=400 bash bench/lab/s30_norm32_ncu.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 400
M="$(ncu_base_metrics),sm__cycles_active.avg,sm__cycles_elapsed.avg,smsp__warps_launched.sum"
M="$M,$(ncu_stall_metrics long_scoreboard short_scoreboard wait barrier no_instruction math_pipe_throttle lg_throttle \
  mio_throttle drain membar branch_resolving dispatch_stall not_selected selected)"
ncu_run "$REPO/bench/lab/s30_norm32_ncu.py" "$M"
