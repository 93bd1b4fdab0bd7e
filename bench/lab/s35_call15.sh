#!/usr/bin/env bash
# Session 35, call 15 (H200): build (kRowCopyLean, the output-order row copy's default where it fits);
# tests/test_transpose.py; bench/lab/s35_lean_lab.py; the benchmark's transposes.
#   bash bench/lab/s35_call15.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_transpose.py" \
  >"$OUT/tests_transpose.log" 2>&1
echo "transpose rc=$?"; tail -1 "$OUT/tests_transpose.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_transpose.log" | head
echo "=== lean lab ($(left)s left)"
timeout -k 5 200 python3 "$REPO/bench/lab/s35_lean_lab.py" >"$OUT/lean_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/lean_lab.log" | cut -c1-200 | tail -40
echo "=== bench transposes ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 -m jax_kernels.bench --ops transpose --json "$OUT/bench_transpose.json" \
  >"$OUT/bench_transpose.log" 2>&1
echo "bench rc=$?"; grep -E "^transpose|ceiling" "$OUT/bench_transpose.log" | cut -c1-200 | tail -16
