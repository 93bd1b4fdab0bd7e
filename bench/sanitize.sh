#!/usr/bin/env bash
# compute-sanitizer over our kernels, rebuilt with bounds assertions (JK_DEBUG_BOUNDS=ON): memcheck,
# racecheck, initcheck and synccheck at once, each over bench/sanitize_cases.py (every op across every
# dispatch tier, in one process: row lengths 1..65537 incl. the bulk-copy and packed tiers, strided axes,
# statistics/apply entries, masks, transposes of every plan, matmul on the SIMT, skinny, mma.sync and
# wgmma tiers with epilogues). initcheck tracks initialisation only through instrumented kernels, so the
# driver's inputs come from host copies, not XLA kernels.
# JK_SANITIZE_SUITE=1 also runs memcheck over the op test suites (-n 4; ~1400 tests: longer than one
# 10-minute device call once racecheck shares the GPU, so not the default).
# Only our kernels (mangled names in namespace jk: _ZN2jk) are checked, not XLA's, and CUDA API errors are
# not reported (XLA probes the driver with calls that fail by design).
# initcheck does not see writes made by the TMA unit (cp.async.bulk.tensor shared -> global): every output
# of the wgmma tier's TMA-store epilogue then reads as uninitialised when copied to the host (found on the
# H200: the flagged bytes were exactly the TMA-stored bf16/f16 outputs, 16-byte chunks, values right). So
# initcheck runs with JK_MATMUL_WGMMA_EPI=row8, the same tier storing through registers, and with
# JK_MATMUL_TF32=mma (the TF32 wgmma tier stores only through TMA: its 768^3 output read as uninitialised,
# H200, session 5); the TMA-store epilogues are covered by memcheck, racecheck and synccheck, which run the
# default dispatch. The same for JK_MATMUL_PAD=0: on CUDA the matmul lowering pads K and N to 16-byte rows with
# XLA's own pad kernels (M > 8), whose writes initcheck does not see (session 15: 689k "uninitialized" 16-byte reads
# of the padded operands of 33x65x129 and the like); initcheck runs the unpadded kernels on those shapes.
# Prints one summary line per tool; exit status non-zero if any tool reported an error or did not finish.
# Usage (GPU machine): bash bench/sanitize.sh       logs: $JK_SANITIZE_LOGS/sanitize_<tool>.log (/tmp)
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
LOGS=${JK_SANITIZE_LOGS:-/tmp}
mkdir -p "$LOGS"
export PYTHONUNBUFFERED=1 JK_CUDA=ON JK_DEBUG_BOUNDS=ON XLA_PYTHON_CLIENT_PREALLOCATE=false
# Plain stream launches: the sanitizer then sees each kernel launch on its own.
export XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_enable_command_buffer="
[ -d "$REPO/.ffi_headers/xla" ] && export XLA_FFI_INCLUDE_DIR="$REPO/.ffi_headers"
# JK_SANITIZE_NO_REBUILD=1: the installed build as it is (no bounds assertions unless it has them).
[ "${JK_SANITIZE_NO_REBUILD:-0}" = 1 ] || $PY -m pip install --no-build-isolation --no-deps -q "$REPO" || exit 1

cd /tmp
sanitizer() {  # LOG TOOL COMMAND...: $LOGS/sanitize_<LOG>.log
  local log=$1 tool=$2; shift 2
  timeout "${JK_SANITIZE_TIMEOUT:-420}" compute-sanitizer --tool "$tool" --kernel-name kns=_ZN2jk \
    --target-processes all --report-api-errors no --error-exitcode 86 "$@" >"$LOGS/sanitize_$log.log" 2>&1
}
# JK_SANITIZE_TOOLS narrows the tools, JK_SANITIZE_PARTS (sanitize_cases.py) the cases: a quick re-check.
tools=${JK_SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}
for tool in $tools; do
  case $tool in
    initcheck) JK_MATMUL_WGMMA_EPI=row8 JK_MATMUL_TF32=mma JK_MATMUL_PAD=0 \
               sanitizer initcheck initcheck $PY "$REPO/bench/sanitize_cases.py" & ;;
    *) sanitizer $tool $tool $PY "$REPO/bench/sanitize_cases.py" & ;;
  esac
done
if [ "${JK_SANITIZE_SUITE:-0}" = 1 ]; then
  suite=$(for t in norms softmax transpose matmul; do echo "$REPO/tests/test_$t.py"; done)
  sanitizer memcheck_suite memcheck $PY -m pytest -q -p no:cacheprovider -o addopts= -n 4 --maxfail=5 \
    -m "not large" -k "not property and not isolated and not opt_in and not knobs" $suite &
fi
wait

status=0
[ "${JK_SANITIZE_SUITE:-0}" = 1 ] && tools="$tools memcheck_suite"
for tool in $tools; do
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
