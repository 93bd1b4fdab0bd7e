#!/usr/bin/env bash
# compute-sanitizer over the GPU test suite at reduced sizes (no JK_LARGE_TESTS), with the kernels rebuilt
# with bounds assertions (JK_DEBUG_BOUNDS=ON). One pass per tool; only our kernels (namespace jk) are
# checked, XLA's own are skipped. Writes a summary line per tool; exit status non-zero if any tool
# reported an error. Usage (GPU machine): bash bench/sanitize.sh [TESTS...]
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 JK_CUDA=ON JK_DEBUG_BOUNDS=ON XLA_PYTHON_CLIENT_PREALLOCATE=false
# Plain stream launches: the sanitizer then sees each kernel launch on its own.
export XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_enable_command_buffer="
[ -d "$REPO/.ffi_headers/xla" ] && export XLA_FFI_INCLUDE_DIR="$REPO/.ffi_headers"
$PY -m pip install --no-build-isolation --no-deps -q "$REPO" || exit 1

tests=${*:-tests/test_norms.py tests/test_softmax.py tests/test_transpose.py tests/test_matmul.py}
cd /tmp
status=0
for tool in memcheck racecheck initcheck synccheck; do
  log=/tmp/sanitize_$tool.log
  compute-sanitizer --tool "$tool" --kernel-name regex:jk --target-processes all --error-exitcode 86 \
    $PY -m pytest -q -x -p no:cacheprovider -k "not large and not hypothesis" \
    $(for t in $tests; do echo "$REPO/$t"; done) >"$log" 2>&1
  rc=$?
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
  echo "$tool: exit $rc; ${summary:-no summary}; $(grep -E '(passed|failed)' "$log" | tail -1)"
  [ $rc -ne 0 ] && status=1
done
exit $status
