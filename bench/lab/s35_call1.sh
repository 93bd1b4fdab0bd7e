#!/usr/bin/env bash
# Session 35, call 1 (H200): build; softmax's window at the 16-bit lengths the 4-5-6-8 rule moved to C = 6 unmeasured
# (16381, 16763: 2049-2112 packs) against C = 8 and jnp; then session 34's prepared Nsight Compute comparison of XLA's
# x * c against our copies (bench/lab/s34_copy_ncu.py).
#   bash bench/lab/s35_call1.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== softmax window lab ($(left)s left)"
timeout -k 5 150 python3 "$REPO/bench/lab/s33_softmax_window_lab.py" --out "$OUT/s35_window_lab.txt" \
  --dtypes bfloat16,float16 --cases 16384x16381,16384x16763,16384x16891 --variants regs,c6,c8,jnp \
  >"$OUT/window_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/window_lab.log" | cut -c1-300 | tail -14
m="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed"
m="$m,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum"
m="$m,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size"
m="$m,launch__registers_per_thread,smsp__inst_executed.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg"
ncu_run "$REPO/bench/lab/s34_copy_ncu.py" "$m" | cut -c1-700
