#!/usr/bin/env bash
# Session 14, device call 9 (H200): build (sm_90a); Nsight Compute (clocks untouched) on issue 5's transpose
# misses, ours and jnp's kernels: time, DRAM and L2 traffic, issue activity, occupancy, stall reasons, shared-memory
# bank conflicts. Information for the next session; no code change. Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-300}
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
l=$(left)
echo "=== ncu (${l}s left)"
METRICS="$(ncu_base_metrics),lts__t_bytes.sum,launch__block_size,sm__throughput.avg.pct_of_peak_sustained_elapsed"
METRICS="$METRICS,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
METRICS="$METRICS,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
METRICS="$METRICS,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
METRICS="$METRICS,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
METRICS="$METRICS,$(ncu_stall_metrics barrier short_scoreboard long_scoreboard mio_throttle lg_throttle wait \
  not_selected no_instruction)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 10 )) "$NCU" --clock-control none --metrics "$METRICS" \
  python3 "$REPO/bench/lab/s14_transpose_ncu.py" >"$OUT/ncu_transpose.log" 2>&1
echo "ncu rc=$?"; grep -E "^  [a-zA-Z]|ran |==ERR|Error" "$OUT/ncu_transpose.log" | cut -c1-150 | head -40
