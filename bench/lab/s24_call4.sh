#!/usr/bin/env bash
# Session 24, calls 4-8 (H200): build; the SplitPipe tests; per-kernel CUPTI times (s24_kernels.py); a decode lab,
# S24_LAB (default s24_split_lab.py; call 8: s24_m1_lab.py), its cases filtered by S24_FILTER.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-560}
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer=
echo "=== tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= "$REPO/tests/test_matmul.py" \
  -k "pipe or split or workspace" >"$OUT/tests_lab.log" 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_lab.log" | tail -8 | cut -c1-300
echo "=== kernels ($(left)s left)"
timeout -k 5 150 python3 "$REPO/bench/lab/s24_kernels.py" 2>&1 | grep -E "^\||Error" | cut -c1-260
echo "=== lab ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/${S24_LAB:-s24_split_lab.py}" "${S24_FILTER:-}" 2>&1 | tee "$OUT/lab.log" \
  | grep -E "^\||FAILED|Error" | head -60
