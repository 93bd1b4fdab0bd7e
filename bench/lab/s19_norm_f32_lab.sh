#!/usr/bin/env bash
# Session 19: float32 LayerNorm at hidden sizes off the sweep (49152 rows), the default against forced row tiers
# (build/s18_norm_lab, flushed, cudaEvent medians): CTA per row with C = 2 / 4 / 8 packs a thread, the capped
# register tier, the bulk tier, two reads, and the cluster tier below its default threshold (JK_NORM_CLUSTER
# "1000 -1": persistent, "1000 0": a CTA per row). Each variant twice.
cd "$(dirname "$0")/../.."
t() { echo $(( ( ($1 + $2 * 32 - 1) / ($2 * 32) ) * 32 )); }  # threads for P packs at C packs each, whole warps
for cols in ${COLS:-1536 2560 3072 5120 6144 12288}; do
  p=$(( cols / 4 ))
  v="default|block 2 $(t $p 2) 1|block 4 $(t $p 4) 1|block 8 $(t $p 8) 1|block2 8 $(t $p 8)|bulk 0 0 0|tworeads 512"
  v="$v|E:JK_NORM_CLUSTER=1000 -1|E:JK_NORM_CLUSTER=1000 0"
  CASES="layer_norm float32 49152 $cols" VARIANTS="$v|$v" ./build/s18_norm_lab
done
