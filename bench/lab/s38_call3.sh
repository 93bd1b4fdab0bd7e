#!/usr/bin/env bash
# Session 38, call 3 (H200): build (the compact tiles on a grid of tiles by default where there is no batch axis; the
# losing lab tokens removed); tests/test_transpose.py; the full benchmark (results under $OUT).
#   bash bench/lab/s38_call3.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_transpose.py" \
  >"$OUT/tests_transpose.log" 2>&1
echo "transpose rc=$?"; tail -1 "$OUT/tests_transpose.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_transpose.log" | head
echo "=== bench ($(left)s left)"
OUT=$OUT timeout -k 5 $(( $(left) - 5 )) bash "$REPO/bench/gpu_check.sh" bench 2>&1 | tail -3
grep -E "MISSED|targets|geomean" "$OUT/bench.log" | cut -c1-300 | head -12
grep -E "^\| transpose" "$OUT/results.md" | cut -c1-200
