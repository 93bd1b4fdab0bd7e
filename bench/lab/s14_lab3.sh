#!/usr/bin/env bash
# (The metric lists were factored into norm_gpu_common.sh after the call: the same metrics, in another order.)
# Session 14, device call 5 (H200): build (sm_90a); Nsight Compute (clocks untouched) on issue #3's norm cases
# under 90% of copy against their RMSNorm / LayerNorm neighbours: time, DRAM throughput, issue activity,
# instructions, per-pipe rates, stall reasons, occupancy. Logs under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
l=$(left)
echo "=== ncu (${l}s left)"
METRICS="$(ncu_base_metrics),lts__t_bytes.sum,launch__block_size,launch__occupancy_limit_registers"
for p in alu fma xu lsu; do METRICS="$METRICS,sm__inst_executed_pipe_${p}.avg.pct_of_peak_sustained_active"; done
METRICS="$METRICS,$(ncu_stall_metrics barrier membar short_scoreboard long_scoreboard mio_throttle lg_throttle \
  math_pipe_throttle wait not_selected dispatch_stall no_instruction)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 10 )) "$NCU" --clock-control none \
  -k regex:"Norm|Row|Group|Block|Cluster|Hybrid|Short|Packed" --metrics "$METRICS" \
  python3 "$REPO/bench/lab/s14_norm_ncu.py" layer_norm:bfloat16:49152x512 rms_norm:bfloat16:49152x512 \
  layer_norm:bfloat16:49152x1024 rms_norm:bfloat16:49152x1024 layer_norm:bfloat16:24576x65536 \
  rms_norm:bfloat16:24576x65536 layer_norm:float32:49152x32768 rms_norm:float32:49152x32768 \
  layer_norm:float32:49152x32 rms_norm:float32:49152x32 >"$OUT/ncu_norms.log" 2>&1
echo "ncu rc=$?"; grep -E "^  [a-zA-Z]|ran |==ERR|Error" "$OUT/ncu_norms.log" | cut -c1-150 | head -40
