#!/usr/bin/env bash
# Runs the CUDA norm launcher and kernels on the CPU (bench/lab/norm_emulator.cc explains how and what it
# cannot check) for the default dispatch and each JK_NORM_TIER candidate. No GPU needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
CUDA_INC=${CUDA_INC:-$(ls -d ${CUDA_HOME:-/usr/local/cuda}/include /usr/local/cuda*/include 2>/dev/null | head -1)}
B=$(mktemp -d)
mkdir -p "$B/norm" "$B/common"
# kernel<<<blocks, threads, smem, stream>>>(args);  ->  jk_emu::Launch(&kernel, blocks, threads, smem, stream, args);
# The launcher and the statistics/apply header (its launchers live there) are rewritten alike.
rewrite() {
  perl -0pe 's/([\w:]+(?:<[^;<>]*>)?)\s*<<<(.*?)>>>\((.*?)\);/jk_emu::Launch(&$1, $2, $3);/gs; s/cudaLaunchKernelEx\(&([\w.]+), /jk_emu::LaunchEx(&$1, /g; s/cfg\.gridDim/cfg.*jk_emu::kGrid/g; s/cfg\.blockDim/cfg.*jk_emu::kBlock/g' "$1"
}
rewrite cuda/norm/norm_launch.cu >"$B/emu_norm_launch.cc"
rewrite cuda/common/launch.h >"$B/common/launch.h"  # ClusterLaunch sets cfg.gridDim / cfg.blockDim
rewrite cuda/norm/norm_stats_apply.cuh >"$B/norm/norm_stats_apply.cuh"
rewrite cuda/norm/norm_strided.cuh >"$B/norm/norm_strided.cuh"  # the column tile's cluster launch
rewrite cuda/norm/norm_short.cu >"$B/emu_norm_short.cc"
grep -q 'jk_emu::Launch' "$B/emu_norm_short.cc" || { echo "norm_emulate.sh: the short-row launch not rewritten"; exit 1; }
n=$(grep -c 'jk_emu::Launch' "$B/emu_norm_launch.cc")
[ "$n" -ge 8 ] || { echo "norm_emulate.sh: expected >= 8 rewritten launches, got $n"; exit 1; }
grep -q '<<<' "$B/norm/norm_stats_apply.cuh" && { echo "norm_emulate.sh: a launch in norm_stats_apply.cuh not rewritten"; exit 1; }
# Dynamic shared memory: the emulator's per-launch buffer.
sed -E 's/extern __shared__ __align__\(128\) unsigned char row_buffers\[\];/unsigned char* row_buffers = jk_emu::dyn_smem;/' \
  cuda/norm/norm_kernels.cuh >"$B/norm/norm_kernels.cuh"
grep -q 'jk_emu::dyn_smem' "$B/norm/norm_kernels.cuh" || { echo "norm_emulate.sh: dynamic smem not rewritten"; exit 1; }
g++ -std=c++20 -O1 -pthread -w -fsanitize=alignment,undefined -fno-sanitize-recover=all -I"$B" -Icuda -I"$CUDA_INC" \
  bench/lab/norm_emulator.cc -o "$B/emu"
status=0
# EMU_TIERS (';'-separated, 'default' for the unset variable) narrows the list.
IFS=';' read -ra tiers <<<"${EMU_TIERS:-default;proposed;block-lean;bulk 2 64 0;bulk 0 512 0;short 2 1 0;short 4 0 0;short 1 0 0;short 2 1 0 1;packed 1;packed 2;packed 4}"
for tier in "${tiers[@]}"; do
  [ "$tier" = default ] && tier=""
  if [ -z "$tier" ]; then "$B/emu" "${EMU_SMS:-2}" || status=1; else JK_NORM_TIER="$tier" "$B/emu" "${EMU_SMS:-2}" || status=1; fi
done
exit $status
