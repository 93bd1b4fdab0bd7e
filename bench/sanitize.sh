#!/usr/bin/env bash
# compute-sanitizer over the GPU test suite at reduced sizes (not the `large` tests, not the property
# tests), with the kernels rebuilt with bounds assertions (JK_DEBUG_BOUNDS=ON). One run per tool, the four
# tools at once (each with a few pytest workers: the suite is bound by host-side compilation, and one
# device call lasts 10 minutes). Only our kernels (mangled names in namespace jk: _ZN2jk) are checked, not
# XLA's, and CUDA API errors are not reported (XLA probes the driver with calls that fail by design).
# Prints one summary line per tool; exit status non-zero if any tool reported an error or did not finish.
# Usage (GPU machine): bash bench/sanitize.sh [TESTS...]     logs: $JK_SANITIZE_LOGS/sanitize_<tool>.log
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
LOGS=${JK_SANITIZE_LOGS:-/tmp}
export PYTHONUNBUFFERED=1 JK_CUDA=ON JK_DEBUG_BOUNDS=ON XLA_PYTHON_CLIENT_PREALLOCATE=false
# Plain stream launches: the sanitizer then sees each kernel launch on its own.
export XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_enable_command_buffer="
[ -d "$REPO/.ffi_headers/xla" ] && export XLA_FFI_INCLUDE_DIR="$REPO/.ffi_headers"
$PY -m pip install --no-build-isolation --no-deps -q "$REPO" || exit 1

tests=${*:-tests/test_norms.py tests/test_softmax.py tests/test_transpose.py tests/test_matmul.py}
cd /tmp
for tool in memcheck racecheck initcheck synccheck; do
  timeout "${JK_SANITIZE_TIMEOUT:-420}" \
    compute-sanitizer --tool "$tool" --kernel-name kns=_ZN2jk --target-processes all --report-api-errors no \
      --error-exitcode 86 \
      $PY -m pytest -q -p no:cacheprovider -o addopts= -n "${JK_SANITIZE_WORKERS:-3}" --maxfail=5 \
        -m "not large" -k "not property" $(for t in $tests; do echo "$REPO/$t"; done) \
      >"$LOGS/sanitize_$tool.log" 2>&1 &
done
wait

status=0
for tool in memcheck racecheck initcheck synccheck; do
  log="$LOGS/sanitize_$tool.log"
  # One summary per sanitized process (the pytest workers and their subprocesses): add them up.
  # memcheck/initcheck/synccheck: "ERROR SUMMARY: N errors"; racecheck: "RACECHECK SUMMARY: H hazards
  # displayed (N errors, W warnings)": errors are counted, warnings listed in the log.
  errors=$(grep -hoE "(ERROR SUMMARY: [0-9]+ error|\([0-9]+ error)" "$log" | grep -oE "[0-9]+" |
           awk '{ n += $1 } END { print (NR ? n : "?") }')
  processes=$(grep -cE "(ERROR|RACECHECK) SUMMARY" "$log")
  result=$(grep -E "^[0-9]+ (passed|failed)|(passed|failed).* in [0-9.]+s" "$log" | tail -1)
  echo "$tool: ${errors:-?} errors over $processes sanitized processes; pytest: ${result:-no result (timed out?)}"
  if [ "${errors:-1}" != 0 ] || ! grep -qE "passed" <<<"$result" || grep -qE "failed" <<<"$result"; then
    status=1
    grep -m 20 -E "^=========" "$log" | grep -vE "SUMMARY" | head -20
  fi
done
exit $status
