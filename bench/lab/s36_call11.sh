#!/usr/bin/env bash
# Session 36, call 11 (H200): build; the benchmark's transposes twice (run-to-run of the permute and int8 8192^2 on the
# final code); JSON / logs under $OUT.
#   bash bench/lab/s36_call11.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
for i in 1 2; do
  echo "=== bench transposes, run $i ($(left)s left)"
  timeout -k 5 120 python3 -m jax_kernels.bench --ops transpose --json "$OUT/bench_transpose_$i.json" \
    >"$OUT/bench_transpose_$i.log" 2>&1
  echo "bench rc=$?"; grep -E "^transpose|ceiling" "$OUT/bench_transpose_$i.log" | cut -c1-200 | tail -16
done
