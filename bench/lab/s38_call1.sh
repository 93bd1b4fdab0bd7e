#!/usr/bin/env bash
# Session 38, call 1 (H200): build (lab tokens grid3, rb32/64/256, stcs/ldcs/cs); tests/test_transpose.py;
# bench/lab/s38_lab.py; bench/lab/s37_wordout_lab.py (session 37's int8 word stores, prepared, not timed).
#   bash bench/lab/s38_call1.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 170 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_transpose.py" \
  >"$OUT/tests_transpose.log" 2>&1
echo "transpose rc=$?"; tail -1 "$OUT/tests_transpose.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_transpose.log" | head
echo "=== s38 lab ($(left)s left)"
timeout -k 5 170 python3 "$REPO/bench/lab/s38_lab.py" >"$OUT/s38_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/s38_lab.log" | cut -c1-160 | tail -60
echo "=== wordout lab ($(left)s left)"
timeout -k 5 $(( $(left) - 5 )) python3 "$REPO/bench/lab/s37_wordout_lab.py" >"$OUT/wordout_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/wordout_lab.log" | cut -c1-160 | tail -25
