#!/usr/bin/env bash
# Session 32, call 9 (H200): build; bench/gpu_check.sh test-norm (the window tier with its default rule); the window
# lab again (bfloat16 packs pinned between passes); softmax on odd rows against jnp. Logs under $OUT.
#   bash bench/lab/s32_call9.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== test-norm ($(left)s left)"
mkdir -p "$OUT/norm" && cd "$REPO" && JK_TEST_WORKERS=16 JK_TEST_TIMEOUT=200 JK_LARGE_TESTS=0 OUT=$OUT/norm \
  bash bench/gpu_check.sh test-norm 2>&1 | tail -3; grep -E "^(FAILED|ERROR)" "$OUT/norm/tests.log" | head
echo "=== window lab ($(left)s left)"
cd /tmp && timeout -k 5 200 python3 "$REPO/bench/lab/s32_window_lab.py" --cols 2035,4099,16381 \
  --out "$OUT/s32_window_lab2.txt" 2>&1 | tail -20
echo "=== odd softmax ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s32_odd_softmax_lab.py" --out "$OUT/s32_odd_softmax_lab.txt" 2>&1 | tail -21
