#!/bin/bash
# Session 20 call: the decode split-K lab (standalone binary built on the CPU machine, carried as build/s20_decode_lab).
set -u
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
export CASES="8,4096,4096;4,4096,4096;8,2048,2048;8,4096,14336;8,14336,4096"
export VARIANTS="pipe|split2|split4|split8|split16|pipe2|read132|read264|read528|read1056"
build/s20_decode_lab 2>&1 | tee $OUT/s20_decode.txt
CASES="8,4096,4096" VARIANTS="pipe|split4|split8" ONCE=1 timeout 200 ncu --clock-control none --cache-control none \
  --metrics gpu__time_duration.sum build/s20_decode_lab 2>&1 | grep -E 'SkinnyPipe|SplitReduce|gpu__time|ran' | tee -a $OUT/s20_decode.txt
