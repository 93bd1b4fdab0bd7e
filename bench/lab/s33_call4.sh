#!/usr/bin/env bash
# Session 33, call 4 (H200): build; tests/test_transpose.py -k "row_tile or row_copy" (the tiled row copy's lab
# tokens forced, the input-order row copy); the tiled row copy lab (bench/lab/s33_rowtile_lab.py). Logs under $OUT.
#   bash bench/lab/s33_call4.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== transpose row tests ($(left)s left)"
timeout -k 5 200 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_transpose.py" \
  -k "row_tile or row_copy" >"$OUT/tests_rowtile.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_rowtile.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_rowtile.log" | head
echo "=== rowtile lab ($(left)s left)"
timeout -k 5 $(( $(left) - 8 )) python3 "$REPO/bench/lab/s33_rowtile_lab.py" --out "$OUT/s33_rowtile_lab.txt" \
  >"$OUT/lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/lab.log" | cut -c1-600 | tail -30
