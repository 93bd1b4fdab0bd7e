#!/usr/bin/env bash
# Session 33, call 5 (H200): build; bench/gpu_check.sh test-other (softmax, softmax long rows / columns, transpose,
# sharding, reliability, model, bench files) on the session's defaults; then the tiled row copy lab on a resident grid
# ("rowtilep") and 16 KB A-fastest tiles at the permutes. Logs under $OUT.
#   bash bench/lab/s33_call5.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== test-other ($(left)s left)"
mkdir -p "$OUT/other" && cd "$REPO" && JK_TEST_WORKERS=16 JK_TEST_TIMEOUT=$(( $(left) - 75 )) JK_LARGE_TESTS=0 \
  OUT=$OUT/other bash bench/gpu_check.sh test-other 2>&1 | tail -3; grep -E "^(FAILED|ERROR)" "$OUT/other/tests.log" | head
cd /tmp
echo "=== rowtile lab ($(left)s left)"
timeout -k 5 $(( $(left) - 5 )) python3 "$REPO/bench/lab/s33_rowtile_lab.py" --only 0,4,6,7 \
  --variants def,rowtile8kap,rowtile8kp,rowtile16ka,jnp --out "$OUT/s33_rowtile_lab.txt" >"$OUT/lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/lab.log" | cut -c1-500 | tail -8
