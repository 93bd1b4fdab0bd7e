#!/usr/bin/env bash
# Session 7, one device call (~330 s; give it 600): build (sm_90a); the CUDA lowering's zero padding of rows
# off 16-byte boundaries against the unaligned kernels (bench/lab/matmul_pad_lab.py); the matmul tests.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-480}
l=$(left)
echo "=== pad lab (${l}s left)"
timeout -k 5 170 python3 "$REPO/bench/lab/matmul_pad_lab.py" --budget 140 >"$OUT/pad_lab.log" 2>&1
echo "lab rc=$?"
grep -E "^(\||device|Trace|[A-Za-z]+Error)" "$OUT/pad_lab.log" | cut -c1-300
matmul_tests
