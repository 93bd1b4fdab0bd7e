#!/usr/bin/env bash
# Session 36, call 5 (H200): build ("rcinlean": the lean row copy in input order); tests/test_transpose.py's row-copy
# knob tests; bench/lab/s36_inlean_lab.py.
#   bash bench/lab/s36_call5.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_transpose.py" \
  >"$OUT/tests_transpose.log" 2>&1
echo "transpose rc=$?"; tail -1 "$OUT/tests_transpose.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_transpose.log" | head
echo "=== inlean lab ($(left)s left)"
timeout -k 5 300 python3 "$REPO/bench/lab/s36_inlean_lab.py" >"$OUT/inlean_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/inlean_lab.log" | cut -c1-200 | tail -40
