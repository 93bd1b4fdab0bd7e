#!/usr/bin/env bash
# Session 38, call 6 (H200): build (lab tokens rbwa2 / rbwa4); the compact-grid tests; bench/lab/s38_lab4.py.
#   bash bench/lab/s38_call6.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_transpose.py" \
  -k "compact_grids" >"$OUT/tests_transpose.log" 2>&1
echo "transpose rc=$?"; tail -1 "$OUT/tests_transpose.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_transpose.log" | head
echo "=== s38 lab4 ($(left)s left)"
timeout -k 5 $(( $(left) - 5 )) python3 "$REPO/bench/lab/s38_lab4.py" >"$OUT/s38_lab4.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/s38_lab4.log" | cut -c1-160 | tail -30
