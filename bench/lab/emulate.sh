#!/usr/bin/env bash
# Runs the CUDA transpose launcher and kernels on the CPU (bench/lab/kernel_emulator.cc explains how)
# with many and with few "SMs", so both tile tiers of every element size are exercised. No GPU needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
CUDA_INC=${CUDA_INC:-$(ls -d ${CUDA_HOME:-/usr/local/cuda}/include /usr/local/cuda*/include 2>/dev/null | head -1)}
B=$(mktemp -d)
# kernel<<<blocks, threads, smem, stream>>>(a);  ->  jk_emu::Launch(&kernel, blocks, threads, a);
# (the dynamic shared memory size is dropped: the emulator's dynamic tile is one host buffer)
sed -E 's/(transpose::[A-Za-z0-9]+<[^;]*>)<<<(.*), ([A-Za-z]+), ([A-Za-z0-9_]+), stream>>>\(([a-z])\);/jk_emu::Launch(\&\1, \2, \3, \5);/' \
  cuda/transpose/transpose_launch.cu >"$B/emu_transpose_launch.cc"
if [ "$(grep -c 'jk_emu::Launch' "$B/emu_transpose_launch.cc")" != "$(grep -c '<<<' cuda/transpose/transpose_launch.cu)" ]; then
  echo "emulate.sh: could not rewrite every launch in transpose_launch.cu"; exit 1
fi
# ClusterLaunch sets cfg.gridDim / cfg.blockDim, which the emulator's built-in macros would capture (as
# bench/lab/norm_emulate.sh does).
mkdir -p "$B/common"
sed -E 's/cfg\.gridDim/cfg.*jk_emu::kGrid/g; s/cfg\.blockDim/cfg.*jk_emu::kBlock/g' cuda/common/launch.h >"$B/common/launch.h"
# UBSan (misaligned 16-byte accesses fault on a GPU, not on x86) and the kernels' bounds assertions.
g++ -std=c++20 -O1 -pthread -w -DJK_DEBUG_BOUNDS=1 -fsanitize=alignment,undefined -fno-sanitize-recover=all -I"$B" -Icuda -I"$CUDA_INC" bench/lab/kernel_emulator.cc -o "$B/emu"
"$B/emu" 132 && "$B/emu" 2
# The session-1 dispatch (general flavour only) and the compact flavour at every size.
for knob in old compact; do JK_TRANSPOSE_TIERS=$knob "$B/emu" 132 | sed "s/^/$knob: /"; done
# The session-2 dispatch, the register-block kernel everywhere, the round-1 dispatch (no 256x256 int8
# tile) and the session-4 lab tiers (smallcta, rowbulk: its plain-copy stand-in, the emulator has no bulk
# copy engine); 2 "SMs" puts the big tiles (and, for 1-byte elements, the 256x256 tile) in play.
for knob in ${EMU_KNOBS:-s2 reg r1 smallcta rowbulk}; do
  for sms in 132 2; do JK_TRANSPOSE_TIERS=$knob "$B/emu" $sms | sed "s/^/$knob ($sms): /"; done
done
