#!/usr/bin/env bash
# Session 7, device call (~520 s; give it 600): build (all archs of the package), the multicast pairs with
# CTA-scope remote arrivals against 128x64 tiles alone (bench/lab/matmul_pitch_lab.py, 3 shapes), then the
# non-matmul half of the test suite (bench/gpu_check.sh test-rest). Logs under $OUT.
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
OUT=$OUT bash "$REPO/bench/gpu_check.sh" build || exit 1
echo "=== mc lab"
(cd /tmp && timeout -k 5 60 python3 "$REPO/bench/lab/matmul_pitch_lab.py" --budget 35 \
  --shapes 512x1024x1024,1024x1024x1024,1024x1024x4096 >"$OUT/mc2_lab.log" 2>&1)
grep -E "^(\||Trace|[A-Za-z]+Error)" "$OUT/mc2_lab.log" | cut -c1-300
OUT=$OUT JK_TEST_TIMEOUT=${JK_TEST_TIMEOUT:-380} bash "$REPO/bench/gpu_check.sh" test-rest
