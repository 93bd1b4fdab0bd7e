#!/usr/bin/env bash
# Session 32, call 1 (H200): build; the row-pairs form's tests (JK_NORM_PAIRS=1 rows and large means in
# tests/test_softmax_long.py); the lab of the default against the row-pairs form (bench/lab/s31_lean_lab.py --more
# --variants def,pairs,jnp). Logs under $OUT.
#   bash bench/lab/s32_call1.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== pairs tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_softmax_long.py" \
  -k "PAIRS" >"$OUT/tests_pairs.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_pairs.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_pairs.log" | head
echo "=== lab ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s31_lean_lab.py" --more --variants def,pairs,jnp \
  --out "$OUT/s32_pairs_lab.txt" 2>&1 | tail -20
