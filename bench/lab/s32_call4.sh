#!/usr/bin/env bash
# Session 32, call 4 (H200): build; the lab of float32 rows of 5120-7168 columns on one CTA of the row-pairs form
# (JK_NORM_PAIRS_SHORT=1) against the default; then bench/gpu_check.sh test-other (every test file but the norms').
#   bash bench/lab/s32_call4.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== lab ($(left)s left)"
for n in 5120 6144 7168; do
  timeout -k 5 40 python3 "$REPO/bench/lab/s31_lean_lab.py" --more --variants def,pshort,jnp --dtypes f32 --n $n \
    --out "$OUT/s32_pshort_lab_$n.txt" 2>&1 | tail -2
done
echo "=== test-other ($(left)s left)"
cd "$REPO" && JK_TEST_WORKERS=16 JK_TEST_TIMEOUT=$(( $(left) - 15 )) JK_LARGE_TESTS=0 OUT=$OUT \
  bash bench/gpu_check.sh test-other 2>&1 | tail -4
