#!/usr/bin/env bash
# Session 39, call 6 (H200): build (small 2-D 4-byte transposes with sides multiple of 32 on the lean 32x33 tile;
# kTiledPaddedLean); tests/test_transpose.py; the full benchmark (results under $OUT).
#   bash bench/lab/s39_call6.sh
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
