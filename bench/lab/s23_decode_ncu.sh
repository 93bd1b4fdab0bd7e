#!/usr/bin/env bash
# Session 23 (H200): Nsight Compute sections and SASS of XLA's decode gemm (Triton, bench/lab/s23_decode_ncu.py)
# against SplitPipeKernel<128, 4, 3, 64> in XLA's geometry and SkinnyPipe (bench/lab/s23_decode_lab.cu), to see why
# the same geometry streams b at 5.5 TB/s there and ~3.9 here. Clocks and caches untouched.
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
mkdir -p "$OUT" "$REPO/build"
cd "$REPO"
nvcc -std=c++17 -O3 -arch=sm_90a --expt-relaxed-constexpr -cudart static -lineinfo -I cuda -I bench/lab \
  bench/lab/s23_decode_lab.cu cuda/common/sm90.cu -o build/s23_decode_lab || exit 1
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
SECTIONS="--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables"
SECTIONS="$SECTIONS --section WarpStateStats --section InstructionStats --section SchedulerStats --section Occupancy"
SECTIONS="$SECTIONS --section LaunchStats --section SourceCounters"
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS="--xla_gpu_per_fusion_autotune_cache_dir=/tmp/jk_atc"
cd /tmp
timeout 90 python3 "$REPO/bench/lab/s23_decode_ncu.py" >"$OUT/warm.log" 2>&1; echo "warm rc=$?"
timeout 150 "$NCU" --clock-control none --cache-control none $SECTIONS -k regex:gemm_fusion_dot --launch-skip 2 \
  --launch-count 1 python3 "$REPO/bench/lab/s23_decode_ncu.py" >"$OUT/ncu_xla.txt" 2>&1; echo "ncu xla rc=$?"
timeout 100 "$NCU" --clock-control none --cache-control none -k regex:gemm_fusion_dot --launch-skip 2 --launch-count 1 \
  --section SourceCounters --page source --print-source sass python3 "$REPO/bench/lab/s23_decode_ncu.py" \
  >"$OUT/ncu_xla_sass.txt" 2>&1; echo "ncu xla sass rc=$?"
cd "$REPO"
for v in x128w4s3k64r8 pipe; do
  CASES="8,4096,4096" VARIANTS="$v" ONCE=1 timeout 100 "$NCU" --clock-control none --cache-control none $SECTIONS \
    -k regex:"SplitPipe|SkinnyPipe" --launch-skip 10 --launch-count 1 build/s23_decode_lab >"$OUT/ncu_$v.txt" 2>&1
  echo "ncu $v rc=$?"
done
grep -E "Duration|Throughput|Executed Ipc|Issue Slots|Registers|Theoretical Occ|Achieved Occ|Warp Cycles Per Issued|L2 Hit|Mem Busy|Max Bandwidth|Block Size|Grid Size|Shared Memory Configuration|Dynamic Shared|Stall" \
  "$OUT/ncu_xla.txt" | head -60
wc -l "$OUT"/ncu_*.txt
