#!/usr/bin/env bash
# Session 22, call 11 (H200): the four compute-sanitizer tools over bench/sanitize_cases.py's matmuls part (SimtRing
# now takes 128^3, 256^3 and 128x1024x128 exact float32; the linear cases at 2304 x 2048 take the cooperative 128x128
# tile), rebuilt with bounds assertions. Logs: $OUT/sanitize.log, $OUT/sanitize_logs.tar.gz.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
mkdir -p "$OUT" /tmp/jk_sanitize
T0=$(date +%s)
JK_SANITIZE_PARTS=matmuls JK_SANITIZE_TIMEOUT=$(( ${JK_TOTAL_S:-570} - 200 )) JK_SANITIZE_LOGS=/tmp/jk_sanitize \
  timeout -k 5 $(( ${JK_TOTAL_S:-570} - 5 )) bash "$REPO/bench/sanitize.sh" >"$OUT/sanitize.log" 2>&1
echo "sanitize rc=$? in $(( $(date +%s) - T0 ))s"
tar -C /tmp -czf "$OUT/sanitize_logs.tar.gz" jk_sanitize
tail -14 "$OUT/sanitize.log"
