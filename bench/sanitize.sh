#!/usr/bin/env bash
# compute-sanitizer over our kernels, rebuilt with bounds assertions (JK_DEBUG_BOUNDS=ON), the four tools
# at once (one device call lasts 10 minutes):
#   memcheck, racecheck  the op test suites at reduced sizes (not the `large` tests, not the property tests,
#                        not the two tests that start a Python subprocess: under the sanitizer those outrun
#                        their own timeouts), with a few pytest workers each;
#   initcheck, synccheck bench/sanitize_cases.py, every op across every dispatch tier in one process.
#                        initcheck tracks initialisation only through instrumented kernels, so its inputs
#                        come from host copies, not XLA kernels; synccheck crashed under pytest-xdist.
# Only our kernels (mangled names in namespace jk: _ZN2jk) are checked, not XLA's, and CUDA API errors are
# not reported (XLA probes the driver with calls that fail by design).
# Prints one summary line per tool; exit status non-zero if any tool reported an error or did not finish.
# Usage (GPU machine): bash bench/sanitize.sh       logs: $JK_SANITIZE_LOGS/sanitize_<tool>.log (/tmp)
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
LOGS=${JK_SANITIZE_LOGS:-/tmp}
export PYTHONUNBUFFERED=1 JK_CUDA=ON JK_DEBUG_BOUNDS=ON XLA_PYTHON_CLIENT_PREALLOCATE=false
# Plain stream launches: the sanitizer then sees each kernel launch on its own.
export XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_enable_command_buffer="
[ -d "$REPO/.ffi_headers/xla" ] && export XLA_FFI_INCLUDE_DIR="$REPO/.ffi_headers"
$PY -m pip install --no-build-isolation --no-deps -q "$REPO" || exit 1

cd /tmp
sanitizer() {  # TOOL COMMAND...
  local tool=$1; shift
  timeout "${JK_SANITIZE_TIMEOUT:-420}" compute-sanitizer --tool "$tool" --kernel-name kns=_ZN2jk \
    --target-processes all --report-api-errors no --error-exitcode 86 "$@" >"$LOGS/sanitize_$tool.log" 2>&1
}
suite=$(for t in norms softmax transpose matmul; do echo "$REPO/tests/test_$t.py"; done)
for tool in memcheck racecheck; do
  sanitizer $tool $PY -m pytest -q -p no:cacheprovider -o addopts= -n "${JK_SANITIZE_WORKERS:-4}" --maxfail=5 \
    -m "not large" -k "not property and not isolated and not opt_in" $suite &
done
for tool in initcheck synccheck; do
  sanitizer $tool $PY "$REPO/bench/sanitize_cases.py" &
done
wait

status=0
for tool in memcheck racecheck initcheck synccheck; do
  log="$LOGS/sanitize_$tool.log"
  # memcheck/initcheck/synccheck: "ERROR SUMMARY: N errors"; racecheck: "RACECHECK SUMMARY: H hazards
  # displayed (N errors, W warnings)": errors are counted, warnings listed in the log.
  errors=$(grep -hoE "(ERROR SUMMARY: [0-9]+ error|\([0-9]+ error)" "$log" | grep -oE "[0-9]+" |
           awk '{ n += $1 } END { print (NR ? n : "?") }')
  result=$(grep -E "(passed|failed).* in [0-9.]+s|^[0-9]+ cases, [0-9]+ wrong" "$log" | tail -1)
  echo "$tool: ${errors} errors; ${result:-no result (crashed or timed out)}"
  if [ "$errors" != 0 ] || [ -z "$result" ] || grep -qE "failed| [1-9][0-9]* wrong" <<<"$result"; then
    status=1
    grep -m 20 -E "^========= +(Invalid|Uninitialized|Race|Barrier|Error|Program)" "$log"
  fi
done
exit $status
