#!/usr/bin/env bash
# Session 22, call 4 (H200): Nsight Compute (clocks and caches untouched) on bench/lab/s22_ncu.py's kernels, after an
# unprofiled run that fills XLA's autotune cache (session 15: XLA's gemm autotuning crashed under ncu); then the
# panel tests (the shared-memory size fix).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-420}
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS="--xla_gpu_per_fusion_autotune_cache_dir=/tmp/jk_atc"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout -k 5 90 python3 "$REPO/bench/lab/s22_ncu.py" >"$OUT/ncu_warm.log" 2>&1
echo "warm rc=$?"
echo "=== ncu ($(left)s left)"
METRICS="$(ncu_base_metrics),lts__t_bytes.sum,launch__block_size,launch__cluster_dim_x,lts__t_sector_hit_rate.pct"
METRICS="$METRICS,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__shared_mem_per_block_dynamic"
METRICS="$METRICS,launch__shared_mem_per_block_static,sm__cycles_active.avg,sm__cycles_elapsed.avg"
METRICS="$METRICS,smsp__inst_executed_pipe_fma.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
METRICS="$METRICS,$(ncu_stall_metrics barrier short_scoreboard long_scoreboard mio_throttle lg_throttle wait \
  not_selected no_instruction membar math_pipe_throttle dispatch_stall)"
timeout -k 5 200 "$NCU" --clock-control none --cache-control none --metrics "$METRICS" \
  python3 "$REPO/bench/lab/s22_ncu.py" >"$OUT/ncu.log" 2>&1
echo "ncu rc=$?"; grep -E "^  [a-zA-Z]|ran |==ERR|Error" "$OUT/ncu.log" | cut -c1-160 | head -200
echo "=== tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= "$REPO/tests/test_matmul.py" \
  -k "panel or float32 or unaligned or empty or broadcast or epilogue or handler" >"$OUT/tests_lab.log" 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_lab.log" | tail -15 | cut -c1-200
