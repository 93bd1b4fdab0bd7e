#!/usr/bin/env bash
# One device call of a lab (H200): build (sm_90a); the tests of FILES matching -k FILTER (none if FILTER is empty);
# then bench/lab/LAB with the arguments in LAB_ARGS (split on spaces) and the caller's environment (a lab's case
# list is chosen by its own variable, e.g. S20_LAB or S21_LAB). Logs: $OUT/tests_lab.log, $OUT/lab.log.
#   [S21_LAB=...] [LAB_ARGS=...] [JK_TOTAL_S=...] bash bench/lab/lab_call.sh LAB FILTER [FILES...]
# The session records (bench/lab/sNN_h200.md) give each call's line.
. "$(dirname "$0")/norm_gpu_common.sh"
lab=$1 filter=$2
shift 2
norm_gpu_start ${JK_TOTAL_S:-580}  # sets REPO (the test paths below need it)
files=$(for f in "${@:-tests/test_matmul.py}"; do echo "$REPO/$f"; done)
export XLA_PYTHON_CLIENT_PREALLOCATE=false
if [ -n "$filter" ]; then
  echo "=== tests ($(left)s left)"
  # shellcheck disable=SC2086  # files is a list of paths
  timeout -k 5 200 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= $files -k "$filter" >"$OUT/tests_lab.log" 2>&1
  echo "pytest rc=$?"
  grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_lab.log" | tail -15 | cut -c1-300
fi
l=$(left)
echo "=== $lab ($l s left)"
# shellcheck disable=SC2086  # LAB_ARGS is split on purpose
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/$lab" ${LAB_ARGS:-} \
  2>&1 | tee "$OUT/lab.log" | grep -E "^\||device|FAILED|Error" | awk 'NR <= 90'  # awk reads on: no SIGPIPE
