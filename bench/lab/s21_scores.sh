#!/usr/bin/env bash
# Session 21, call 11 (H200): build (sm_90a); bench/lab/s21_scores_lab.py; then Nsight Compute on one scores matmul
# (kernel names, grid, time).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-300}
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer=
timeout -k 5 150 python3 "$REPO/bench/lab/s21_scores_lab.py" 2>&1 | tee "$OUT/scores_lab.log" | grep -v Warning | tail -8
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
l=$(left)
echo "=== ncu (${l}s left)"
ONCE=1 timeout -k 5 $(( l - 10 )) "$NCU" --clock-control none --cache-control none -k regex:Kernel \
  --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,dram__bytes_write.sum,launch__shared_mem_per_block_dynamic \
  python3 "$REPO/bench/lab/s21_scores_lab.py" >"$OUT/ncu.log" 2>&1
echo "ncu rc=$?"; grep -E "jk::|  [a-z_]+__|==ERR" "$OUT/ncu.log" | cut -c1-160 | head -24
