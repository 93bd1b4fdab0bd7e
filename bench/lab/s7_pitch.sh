#!/usr/bin/env bash
# Session 7, one device call (~330 s; give the call a 600 s timeout). Logs under $OUT.
#  1. build (sm_90a);
#  2. why bf16 matmuls with N not a multiple of 64 run slow: 4096 x N x 4096 over N around 1024 (row pitch
#     mod 128 bytes 0, 16, 32, 48, 64, 96, ...), the small shapes, under the tensor maps' L2 promotions
#     (bench/lab/matmul_pitch_lab.py --l2);
#  3. Nsight Compute (SpeedOfLight, MemoryWorkloadAnalysis) on jnp's and our kernels at 4096x1024x4096 and
#     4096x1000x4096 (bench/lab/matmul_pitch_ncu.py);
#  4. the matmul tests (the 128x64 one-box fix).
# As run (session 7): ncu could not profile WgmmaTmaKernel and the killed profilee kept the GPU, so step 4
# found no device (bench/lab/matmul_pitch2_h200.md).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-480}
l=$(left)
echo "=== pitch lab (${l}s left)"
timeout -k 5 110 python3 "$REPO/bench/lab/matmul_pitch_lab.py" --budget 90 --l2 --shapes \
  4096x1024x4096,4096x1000x4096,4096x1008x4096,4096x1016x4096,4096x1040x4096,4096x1056x4096,4096x1088x4096,4096x960x4096,1024x1000x1024,1024x1024x1000,1000x1000x1000,1024x1024x1024 \
  >"$OUT/pitch_l2_lab.log" 2>&1
echo "lab rc=$?"
grep -E "^(\||device|Trace|[A-Za-z]+Error)" "$OUT/pitch_l2_lab.log" | cut -c1-300
l=$(left)
echo "=== ncu (${l}s left)"
# XLA's gemm autotuning launches many kernels: run once to fill an autotune cache, then profile with it.
export XLA_FLAGS="--xla_gpu_per_fusion_autotune_cache_dir=/tmp/jk_atc"
timeout -k 5 60 python3 "$REPO/bench/lab/matmul_pitch_ncu.py" 4096x1024x4096 4096x1000x4096 >"$OUT/ncu_warm.log" 2>&1
timeout -k 5 120 ncu --clock-control none -c 12 --section SpeedOfLight --section MemoryWorkloadAnalysis \
  python3 "$REPO/bench/lab/matmul_pitch_ncu.py" 4096x1024x4096 4096x1000x4096 >"$OUT/ncu.log" 2>&1
echo "ncu rc=$?"
grep -E "^  [A-Za-z_].*\(|Duration|L2 Cache Throughput|DRAM Throughput|Memory Throughput|Compute \(SM\)|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Mem Pipes" "$OUT/ncu.log" | cut -c1-160 | head -80
unset XLA_FLAGS
matmul_tests
