#!/usr/bin/env bash
# Session 23, calls 2-3 (H200): build; the ring tests under each lab config; bench/lab/s23_ring_lab.py; then Nsight
# Compute on bench/lab/s23_ncu.py's kernels (after an unprofiled run that fills XLA's autotune cache).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
for c in default 64x3 16x8 t32; do
  JK_MATMUL_SIMT_RING_CFG=$c timeout -k 5 90 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
    "$REPO/tests/test_matmul.py" -k "(float32_simt and ring) or float32_ring" >"$OUT/tests_lab_$c.log" 2>&1
  echo "pytest $c rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_lab_$c.log" | tail -5 | cut -c1-200
done
echo "=== lab ($(left)s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 200 python3 "$REPO/bench/lab/s23_ring_lab.py" 2>&1 \
  | tee "$OUT/lab.log" | grep -E "^\||device|FAILED|Error" | head -90
echo "=== ncu ($(left)s left)"
export XLA_FLAGS="--xla_gpu_per_fusion_autotune_cache_dir=/tmp/jk_atc"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout -k 5 60 python3 "$REPO/bench/lab/s23_ncu.py" >"$OUT/ncu_warm.log" 2>&1
METRICS="$(ncu_base_metrics),lts__t_bytes.sum,launch__block_size"
METRICS="$METRICS,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed"
METRICS="$METRICS,sm__cycles_active.avg,sm__cycles_elapsed.avg,smsp__inst_executed_pipe_fma.sum"
METRICS="$METRICS,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
METRICS="$METRICS,$(ncu_stall_metrics barrier short_scoreboard long_scoreboard mio_throttle lg_throttle wait \
  not_selected no_instruction math_pipe_throttle dispatch_stall selected)"
timeout -k 5 150 "$NCU" --clock-control none --cache-control none --metrics "$METRICS" \
  python3 "$REPO/bench/lab/s23_ncu.py" >"$OUT/ncu.log" 2>&1
echo "ncu rc=$?"; grep -E "^  [a-zA-Z]|ran |==ERR|Error" "$OUT/ncu.log" | cut -c1-160 | head -150
