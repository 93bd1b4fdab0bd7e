#!/usr/bin/env bash
# Session 28, one H200 call: build this checkout (with the R-rows packed kernels applied), the norm row tests under
# "packed 2 2" and "packed 4 2", then bench/lab/s28_norm_rows_lab.py. Logs: $OUT/tests_rows*.log, $OUT/lab.log.
#   JK_TOTAL_S=560 bash bench/lab/s28_norm_rows.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 560
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer=
for tier in "packed 2 2" "packed 4 2"; do
  echo "=== tests under $tier ($(left)s left)"
  JK_NORM_TIER="$tier" timeout -k 5 60 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
    "$REPO/tests/test_norms.py" -k "rows or packed or optional" >"$OUT/tests_rows_${tier// /_}.log" 2>&1
  tail -1 "$OUT/tests_rows_${tier// /_}.log"
done
echo "=== lab ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s28_norm_rows_lab.py" >"$OUT/lab.log" 2>&1
grep -E "^\||^device|Error|error" "$OUT/lab.log" | grep -v "| [0-9] |"
