#!/usr/bin/env bash
# Session 32, call 3 (H200): build; the lab of float32 rows of one CTA on the row-pairs form (JK_NORM_PAIRS_SHORT=1,
# 4 packs a thread) against the default at 4096 / 8192 columns; the row-pairs knob tests; then the sanitizer's
# long-row part (memcheck, racecheck, synccheck) on the new defaults (its own debug build). Logs under $OUT.
#   bash bench/lab/s32_call3.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== lab ($(left)s left)"
for n in 8192 4096; do
  timeout -k 5 60 python3 "$REPO/bench/lab/s31_lean_lab.py" --more --variants def,pshort,jnp --dtypes f32 --n $n \
    --out "$OUT/s32_pshort_lab_$n.txt" 2>&1 | tail -2
done
echo "=== pairs tests ($(left)s left)"
timeout -k 5 100 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_softmax_long.py" \
  -k "PAIRS" >"$OUT/tests_pairs.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_pairs.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_pairs.log" | head
echo "=== sanitizer ($(left)s left)"
cd "$REPO" && JK_SANITIZE_TIMEOUT=$(( $(left) - 60 )) JK_SANITIZE_PARTS=long_rows \
  JK_SANITIZE_TOOLS="memcheck racecheck synccheck" JK_SANITIZE_LOGS=$OUT/san bash bench/sanitize.sh 2>&1 | tail -8
