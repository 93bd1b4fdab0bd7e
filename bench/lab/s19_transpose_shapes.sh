#!/usr/bin/env bash
# Session 19: build (sm_90a); bench/lab/s19_transpose_shapes.py (transposes off issue 5's case list against jnp).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-400}
l=$(left)
echo "=== transpose shapes (${l}s left)"
timeout -k 5 $(( l - 5 )) python3 "$REPO/bench/lab/s19_transpose_shapes.py" 2>&1 | tee "$OUT/transpose_shapes.txt" \
  | grep -E "^\||device|geomean|Error"
