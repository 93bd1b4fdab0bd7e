#!/usr/bin/env bash
# Session 34, call 5 (H200): build (the row copy divides by precomputed multipliers, FastDivU32); tests/test_transpose.py;
# the row copy lab again, fast against slow division (bench/lab/s34_rowcopy_lab.py).
#   bash bench/lab/s34_call5.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== transpose tests ($(left)s left)"
timeout -k 5 200 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_transpose.py" \
  >"$OUT/tests_transpose.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_transpose.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_transpose.log" | head
echo "=== row copy lab ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s34_rowcopy_lab.py" >"$OUT/rowcopy_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/rowcopy_lab.log" | cut -c1-200 | tail -50
