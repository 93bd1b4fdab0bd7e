#!/usr/bin/env bash
# Runs the strided norm tiers on the CPU (bench/lab/strided_emulator.cc explains how and what it cannot
# check) for the default dispatch and each JK_STRIDED_TILE configuration with clusters of 1 (configurations
# that would need a cluster fall back to the scalar kernels). No GPU needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
CUDA_INC=${CUDA_INC:-$(ls -d ${CUDA_HOME:-/usr/local/cuda}/include /usr/local/cuda*/include 2>/dev/null | head -1)}
B=$(mktemp -d)
mkdir -p "$B/norm" "$B/softmax" "$B/common"
# As bench/lab/norm_emulate.sh: launches rewritten into jk_emu::Launch / LaunchEx; norm_strided.cuh too.
rewrite() {
  perl -0pe 's/([\w:]+(?:<[^;<>]*>)?)\s*<<<(.*?)>>>\((.*?)\);/jk_emu::Launch(&$1, $2, $3);/gs; s/cudaLaunchKernelEx\(&([\w.]+), /jk_emu::LaunchEx(&$1, /g; s/cfg\.gridDim/cfg.*jk_emu::kGrid/g; s/cfg\.blockDim/cfg.*jk_emu::kBlock/g' "$1"
}
rewrite cuda/norm/norm_launch.cu >"$B/emu_norm_launch.cc"
rewrite cuda/common/launch.h >"$B/common/launch.h"  # ClusterLaunch sets cfg.gridDim / cfg.blockDim
rewrite cuda/norm/norm_stats_apply.cuh >"$B/norm/norm_stats_apply.cuh"
rewrite cuda/norm/norm_strided.cuh >"$B/norm/norm_strided.cuh"
rewrite cuda/norm/norm_short.cu >"$B/emu_norm_short.cc"
grep -q 'jk_emu::LaunchEx' "$B/norm/norm_strided.cuh" || { echo "strided_emulate.sh: the tile launch not rewritten"; exit 1; }
rewrite cuda/softmax/softmax_columns.cuh >"$B/softmax/softmax_columns.cuh"
# The softmax kernels' PTX (MUFU exp2/log2/rcp, vector stores, the bf16 unpacking) as host C++.
perl -pe 's/asm\("ex2\.approx[^;]*;[^;]*;/r = exp2f(v);/; s/asm\("lg2\.approx[^;]*;[^;]*;/r = log2f(v);/;
  s/asm\("rcp\.approx[^;]*;[^;]*;/r = 1.f \/ v;/; s/asm\("st\.global\.v4[^;]*;[^;]*;/std::memcpy(p, &r, 16);/;
  s/asm\("st\.global\.v2[^;]*;[^;]*;/std::memcpy(p, &r, 8);/;
  s/asm volatile\("shl\.b32[^;]*;[^;]*;[^;]*;/lo = w << 16; hi = w & 0xFFFF0000u;/;
  s/extern __shared__ __align__\(128\) unsigned char stage_mem\[\];/unsigned char* stage_mem = jk_emu::dyn_smem;/' \
  cuda/softmax/softmax_kernels.cuh >"$B/softmax/softmax_kernels.cuh"
[ "$(grep -c 'asm' "$B/softmax/softmax_kernels.cuh")" -le 1 ] || { grep -n asm "$B/softmax/softmax_kernels.cuh"; exit 1; }
# RcpApprox lives in common/device.cuh.
perl -pe 's/asm\("rcp\.approx[^;]*;[^;]*;/r = 1.f \/ v;/' cuda/common/device.cuh >"$B/common/device.cuh"
grep -q 'asm("rcp' "$B/common/device.cuh" && { echo "strided_emulate.sh: RcpApprox not rewritten"; exit 1; }
sed -E 's/extern __shared__ __align__\(128\) unsigned char row_buffers\[\];/unsigned char* row_buffers = jk_emu::dyn_smem;/' \
  cuda/norm/norm_kernels.cuh >"$B/norm/norm_kernels.cuh"
g++ -std=c++20 -O1 -pthread -w -fsanitize=alignment,undefined -fno-sanitize-recover=all -I"$B" -Ibench/lab -Icuda \
  -I"$CUDA_INC" bench/lab/strided_emulator.cc -o "$B/emu"
status=0
# No "default" since session 9: the default is now the column tile with clusters as needed, which the
# emulator cannot run (it aborted); its configurations are covered below with clusters of 1.
IFS=";" read -ra tiles <<<"${EMU_TILES:-legacy;2 4 1024 1;2 8 1024 1;2 16 512 1;4 8 512 1;4 16 512 1}"
for t in "${tiles[@]}"; do
  if [ "$t" = default ]; then "$B/emu" || status=1; else JK_STRIDED_TILE="$t" "$B/emu" || status=1; fi
done
exit $status
