#!/usr/bin/env bash
# Session 37, call 2 (H200): build (NarrowAccessTile: 8- / 4-byte accesses contiguous per instruction; 64x65 padded
# tiles for 1- and 2-byte element accesses); tests/test_transpose.py; bench/lab/s37_odd_lab.py; the benchmark's
# transposes (issue 5's cases and the ragged ones).
#   bash bench/lab/s37_call2.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_transpose.py" \
  >"$OUT/tests_transpose.log" 2>&1
echo "transpose rc=$?"; tail -1 "$OUT/tests_transpose.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_transpose.log" | head
echo "=== odd lab ($(left)s left)"
timeout -k 5 200 python3 "$REPO/bench/lab/s37_odd_lab.py" >"$OUT/odd_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/odd_lab.log" | cut -c1-200 | tail -70
echo "=== bench transposes ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 -m jax_kernels.bench --ops transpose --json "$OUT/bench_transpose.json" \
  >"$OUT/bench_transpose.log" 2>&1
echo "bench rc=$?"; grep -E "^transpose|ceiling" "$OUT/bench_transpose.log" | cut -c1-200 | tail -20
