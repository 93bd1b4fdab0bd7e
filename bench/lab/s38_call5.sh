#!/usr/bin/env bash
# Session 38, call 5 (H200): build; the benchmark's transposes (a second run of the final kernels); then sanitizer run
# 43, memcheck and racecheck over the transposes part (its own bounds-checked build).
#   bash bench/lab/s38_call5.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== bench transposes ($(left)s left)"
timeout -k 5 150 python3 -m jax_kernels.bench --ops transpose --json "$OUT/bench_transpose.json" \
  >"$OUT/bench_transpose.log" 2>&1
echo "bench rc=$?"; grep -E "^transpose|ceiling" "$OUT/bench_transpose.log" | cut -c1-200 | tail -8
echo "=== sanitizer ($(left)s left)"
JK_SANITIZE_PARTS=transposes JK_SANITIZE_TOOLS="memcheck racecheck" JK_SANITIZE_LOGS=$OUT/san \
  JK_SANITIZE_TIMEOUT=$(( $(left) - 150 )) timeout -k 5 $(( $(left) - 5 )) bash "$REPO/bench/sanitize.sh" 2>&1 | tail -12
