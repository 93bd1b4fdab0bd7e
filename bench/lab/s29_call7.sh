#!/usr/bin/env bash
# Session 29, call 7 (H200, one call): the 64-column defaults of call 6 built, the short-row lab's second set
# (S29_SET=more: the new defaults against the old and other candidates, R = 2 at other short rows off the sweep),
# the norm test files, then the benchmark. Logs: $OUT/lab_more.log, tests.log, bench.log, results.json, ...
#   JK_TOTAL_S=590 bash bench/lab/s29_call7.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
echo "=== lab ($(left)s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer= S29_SET=more \
  timeout -k 5 120 python3 "$REPO/bench/lab/s29_norm64_lab.py" >"$OUT/lab_more.log" 2>&1
grep -E "median|Error" "$OUT/lab_more.log"
echo "=== test-norm + bench ($(left)s left)"
JK_TEST_WORKERS=16 JK_TEST_TIMEOUT=150 JK_LARGE_TESTS=0 JK_BENCH_TIMEOUT=$(( $(left) - 60 )) OUT=$OUT \
  bash "$REPO/bench/gpu_check.sh" test-norm bench 2>&1 | grep -vE "^\|" | tail -25
