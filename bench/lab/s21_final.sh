#!/usr/bin/env bash
# Session 21, call 8 (H200): bench/lab/lab_call.sh with the bias-fold rule decided once (the fused tests, then
# s21_linear_lab.py's call-8 cases), then compute-sanitizer's four tools over bench/sanitize_cases.py's matmul part
# (rebuilt with bounds assertions), which now includes `linear` without a residual on the unrolled epilogue.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
T0=$(date +%s)
JK_TOTAL_S=${JK_LINEAR_S:-290} LAB_ARGS=4096,1000,3000,3072 bash "$REPO/bench/lab/lab_call.sh" s21_linear_lab.py \
  "default or tmarl or tmal or tma0 or pingpong" tests/test_linear_epilogue.py
left=$(( ${JK_TOTAL_S:-570} - ($(date +%s) - T0) ))
echo "=== sanitize, matmuls part (${left}s left)"
mkdir -p /tmp/jk_sanitize
JK_SANITIZE_PARTS=matmuls JK_SANITIZE_TIMEOUT=$(( left - 130 )) JK_SANITIZE_LOGS=/tmp/jk_sanitize \
  timeout -k 5 $(( left - 5 )) bash "$REPO/bench/sanitize.sh" >"$OUT/sanitize.log" 2>&1
echo "sanitize rc=$?"
tar -C /tmp -czf "$OUT/sanitize_logs.tar.gz" jk_sanitize
tail -12 "$OUT/sanitize.log"
