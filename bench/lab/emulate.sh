#!/usr/bin/env bash
# Runs the CUDA transpose launcher and kernels on the CPU (bench/lab/kernel_emulator.cc explains how)
# with many and with few "SMs", so both tile tiers of every element size are exercised. No GPU needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
CUDA_INC=${CUDA_INC:-$(ls -d ${CUDA_HOME:-/usr/local/cuda}/include /usr/local/cuda*/include 2>/dev/null | head -1)}
B=$(mktemp -d)
# kernel<<<blocks, threads, smem, stream>>>(a);  ->  jk_emu::Launch(kernel, blocks, threads, a);
# for every launch: a named kernel (transpose::X<...>) or a kernel variable (LaunchNarrow's `kernel`), one
# argument struct. The dynamic shared memory size is dropped: the emulator's dynamic tile is one host buffer.
# The tensor-map row copy (transpose::RowCopyTensor, lab tokens rowtma / rowtma16) is not emulated: its
# launch becomes `return cudaErrorNotSupported;` (the emulator has no TMA engine and no tensor maps; its
# cudaGetDriverEntryPointByVersion stand-in already makes LaunchRowCopyTensor report not supported first,
# so that tier falls back to the other row copies).
perl -0pe '
  s{transpose::RowCopyTensor<<<.*?>>>\(.*?\);}{return cudaErrorNotSupported;  // emulator: no tensor maps (emulate.sh)}gs;
  s{([\w:]+(?:<[^;<>]*>)?)\s*<<<([^;]*?),\s*([^,]+?),\s*([^,]+?),\s*stream>>>\((\w+)\);}{jk_emu::Launch($1, $2, $3, $5);}gs;
' cuda/transpose/transpose_launch.cu >"$B/emu_transpose_launch.cc"
if grep -q '<<<' "$B/emu_transpose_launch.cc" ||
   [ "$(grep -c 'jk_emu::Launch(\|emulator: no tensor maps' "$B/emu_transpose_launch.cc")" != \
     "$(grep -c '<<<' cuda/transpose/transpose_launch.cu)" ]; then
  echo "emulate.sh: could not rewrite every launch in transpose_launch.cu:"
  grep -n '<<<' "$B/emu_transpose_launch.cc" || true
  exit 1
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
# copy engine); 2 "SMs" puts the big tiles (and, for 1-byte elements, the 256x256 tile) in play. Then the
# session-33 tiled row copy (transpose_rowtile_kernels.cuh) under its lab tokens: 8 / 4 / 16 KB tiles, B- and
# A-fastest order, and "rowtilep"'s resident grid (2 "SMs": 16 CTAs looping over the tiles); the tokens change
# only the row copy, so those runs take the row-copy cases only (EMU_ROWS_ONLY). Session 35's row-copy tokens:
# "rc256x2" (session 34's output-order shape and divisions), "rcslow" (128 x 1 with division instructions), "rcout"
# (short runs in output order), "rcin128" (input order at 128 x 1 with precomputed divisors), with and without the
# tiled row copy. Session 36's "rcinlean" (16-byte runs of any length in input order, on the lean copy), "wide" (the
# 256x256 int8 tile from two waves), "big128t" (the compact int8 big tile with 128 threads); session 37's "scalarodd" (ragged
# shapes on the padded element-access tiles) , "scalarodd,pad32" (1- and 2-byte ones on 32x33 tiles: the dispatch
# before session 37), "scalarodd,pad1" (64x65 tiles), "padvec0" (no 16-byte side on the padded tiles) and "padword0"
# (no word loads of odd rows on them). Session 38's "grid1" (compact tiles on a 1-D grid everywhere, as before it) and
# "grid3" (on the grid of tiles with a batch axis too). "wideasync" is not emulated: its cp.async loads have no CPU stand-in (the emulator
# runs the staged loads instead).
for knob in ${EMU_KNOBS:-s2 reg r1 smallcta rowbulk rowtile8k rowtile4k,rowtilea rowtile16k rowtile8k,rowtilep \
  rc256x2 rcslow norowtile,rcout norowtile,rc256x2,rcout norowtile,rcin128 rclean0 norowtile,rcout,rclean0 \
  rcinlean norowtile,rcinlean wide big128t scalarodd,pad32 scalarodd,pad1 padvec0 padword0 grid1 grid3 reg,grid1 \
  scalarodd,grid3}; do
  rows_only=""
  case $knob in rowtile* | rc* | norowtile*) rows_only=1 ;; esac
  for sms in 132 2; do
    JK_TRANSPOSE_TIERS=$knob EMU_ROWS_ONLY=$rows_only "$B/emu" $sms | sed "s/^/$knob ($sms): /"
  done
done
