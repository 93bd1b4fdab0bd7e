#!/usr/bin/env bash
# Session 35, call 16 (H200): build (runs of 128 bytes and more on the lean output-order row copy); tests/
# test_transpose.py; bench/lab/s35_lean_lab.py; the benchmark's transposes; then the sanitizer's memcheck over the
# short-run and transpose parts (its own debug build).
#   bash bench/lab/s35_call16.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_transpose.py" \
  >"$OUT/tests_transpose.log" 2>&1
echo "transpose rc=$?"; tail -1 "$OUT/tests_transpose.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_transpose.log" | head
echo "=== lean lab ($(left)s left)"
timeout -k 5 120 python3 "$REPO/bench/lab/s35_lean_lab.py" >"$OUT/lean_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/lean_lab.log" | cut -c1-200 | tail -40
echo "=== bench transposes ($(left)s left)"
timeout -k 5 90 python3 -m jax_kernels.bench --ops transpose --json "$OUT/bench_transpose.json" \
  >"$OUT/bench_transpose.log" 2>&1
echo "bench rc=$?"; grep -E "^transpose|ceiling" "$OUT/bench_transpose.log" | cut -c1-200 | tail -16
echo "=== sanitizer ($(left)s left)"
JK_SANITIZE_PARTS=short_runs,transposes JK_SANITIZE_TOOLS=memcheck JK_SANITIZE_LOGS=$OUT/san JK_SANITIZE_TIMEOUT=200 \
  timeout -k 5 $(( $(left) - 5 )) bash "$REPO/bench/sanitize.sh" 2>&1 | tail -5
