#!/usr/bin/env bash
# Session 37, call 6 (H200): build (the padded tiles with one 16-byte side); tests/test_transpose.py;
# bench/lab/s37_vecside_lab.py; the benchmark's transposes.
#   bash bench/lab/s37_call6.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_transpose.py" \
  >"$OUT/tests_transpose.log" 2>&1
echo "transpose rc=$?"; tail -1 "$OUT/tests_transpose.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_transpose.log" | head
echo "=== vecside lab ($(left)s left)"
timeout -k 5 150 python3 "$REPO/bench/lab/s37_vecside_lab.py" >"$OUT/vecside_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/vecside_lab.log" | cut -c1-200 | tail -40
echo "=== bench transposes ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 -m jax_kernels.bench --ops transpose --json "$OUT/bench_transpose.json" \
  >"$OUT/bench_transpose.log" 2>&1
echo "bench rc=$?"; grep -E "^transpose|ceiling" "$OUT/bench_transpose.log" | cut -c1-200 | tail -20
