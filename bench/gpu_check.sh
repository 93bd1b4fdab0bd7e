#!/usr/bin/env bash
# The GPU machine's one command: build the package, run the whole test suite on the CUDA backend, run the
# benchmark against jax.numpy, and leave logs + a results JSON under $OUT.
#
#   bash bench/gpu_check.sh [STAGE...]     STAGE: build test test-matmul test-rest test-norm test-other bench model
#                                          sharded sanitize
#                                          (default: build test bench model)
# test-matmul / test-rest: the suite in two halves (the matmul files, then the others), for two device calls:
# the whole suite took 390-470 s with 12 workers in session 5, near a call's 10-minute limit with the build.
# test-norm / test-other: test-rest in two (the norm files; the rest), since test-rest outgrew one call with the
# build in session 18 (97 s + ~490 s).
#
# Each stage appends to $OUT: build.log, tests.log, bench.log + results.json + plots.tar, model.log +
# model.json, sharded_tests.log + sharded.log + sharded.json + sharded.md, sanitize.log. `sharded` wants
# >= 2 GPUs (e.g. `bash bench/gpu_check.sh build sharded` on nvidia-h200-x2; ~2 min after the build): the
# sharding tests on the GPUs, then the sharded benchmark (on one GPU it says so and writes no results). A device call lasts at most 10 minutes, so the stages can be split across
# back-to-back calls (the build directory survives while the machine stays warm; `build` is incremental).
# If .ffi_headers/ exists (the jaxlib 0.10.2 XLA FFI headers, carried from the dev machine) the handlers
# are compiled against it, so the tested binary is the one that loads on every jaxlib >= 0.10.2.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 JK_CUDA=ON
# The interpreter that has jax (on the GPU machine a bare `pip`/`pytest` belong to another Python).
PY=${PYTHON:-python3}
[ -d "$REPO/.ffi_headers/xla" ] && export XLA_FFI_INCLUDE_DIR="$REPO/.ffi_headers"
stages=${*:-build test bench model}
status=0

stage() { echo; echo "=== $1 ($(date +%H:%M:%S))"; }

if [[ " $stages " == *" build "* ]]; then
  stage build
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit \
    --format=csv | tee "$OUT/gpu.txt"
  start=$(date +%s)
  if $PY -m pip install --no-build-isolation --no-deps -v "$REPO" >"$OUT/build.log" 2>&1; then
    echo "build ok in $(( $(date +%s) - start ))s"
  else
    tail -80 "$OUT/build.log"; exit 1
  fi
fi

cd /tmp   # import the installed package, not the source tree

matmul_tests="test_matmul.py test_matmul_tf32.py test_linear_epilogue.py"
norm_tests="test_norms.py test_norm_strided.py test_stats_apply.py"
test_paths=""
[[ " $stages " == *" test "* ]] && test_paths="$REPO/tests"
for f in "$REPO"/tests/test_*.py; do
  case " $matmul_tests " in
    *" $(basename "$f") "*) [[ " $stages " == *" test-matmul "* ]] && test_paths="$test_paths $f" ;;
    *) if [[ " $stages " == *" test-rest "* ]]; then
         test_paths="$test_paths $f"
       else  # test-norm / test-other: test-rest in two halves
         case " $norm_tests " in
           *" $(basename "$f") "*) [[ " $stages " == *" test-norm "* ]] && test_paths="$test_paths $f" ;;
           *) [[ " $stages " == *" test-other "* ]] && test_paths="$test_paths $f" ;;
         esac
       fi ;;
  esac
done
if [ -n "$test_paths" ]; then
  stage test
  $PY -c "import jax, jax_kernels; print('jax', jax.__version__, jax.devices(), 'cuda build:', jax_kernels.WITH_CUDA)"
  # Several pytest workers (pytest-xdist) share the GPU: the suite is bound by compilation, not by the
  # GPU. No preallocation, so the processes fit. -v names every result as it happens, so a run cut off
  # by the time limit still says what failed; a test stuck in native code (where a signal cannot reach)
  # is ended by pytest-timeout's thread method, which names it and kills only that worker. The `large`
  # tests (several GiB each) then run alone, serially: next to the workers they ran out of memory.
  export XLA_PYTHON_CLIENT_PREALLOCATE=false
  common="-v -rfE -p no:cacheprovider -o addopts= --durations=10 -p timeout --timeout=240 --timeout-method=thread"
  # shellcheck disable=SC2086  # test_paths is a list of paths
  timeout "${JK_TEST_TIMEOUT:-540}" $PY -m pytest $common -n "${JK_TEST_WORKERS:-12}" -m "not large" \
    $test_paths >"$OUT/tests.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=$rc
  if [ "${JK_LARGE_TESTS:-1}" = 1 ]; then
    # shellcheck disable=SC2086
    JK_LARGE_TESTS=1 timeout "${JK_LARGE_TEST_TIMEOUT:-300}" $PY -m pytest $common -m large $test_paths \
      >>"$OUT/tests.log" 2>&1
    rc=$?; [ $rc -ne 0 ] && status=$rc
  fi
  grep -E "(FAILED|ERROR|Timeout)" "$OUT/tests.log" | head -40
  grep -cE " PASSED " "$OUT/tests.log" | sed 's/^/tests passed so far: /'
  grep -E "^=+ .*(passed|failed).* in " "$OUT/tests.log"
fi

if [[ " $stages " == *" bench "* ]]; then
  stage bench
  rm -rf /tmp/jk_plots
  timeout "${JK_BENCH_TIMEOUT:-420}" $PY -m jax_kernels.bench --json "$OUT/results.json" \
    --plot-dir /tmp/jk_plots --markdown "$OUT/results.md" ${JK_BENCH_ARGS:-} >"$OUT/bench.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=$rc
  [ -d /tmp/jk_plots ] && tar -C /tmp -cf "$OUT/plots.tar" jk_plots
  tail -120 "$OUT/bench.log"
fi

if [[ " $stages " == *" model "* ]]; then
  stage model
  timeout 240 $PY -m jax_kernels.bench --model --json "$OUT/model.json" >"$OUT/model.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=$rc
  tail -20 "$OUT/model.log"
fi

if [[ " $stages " == *" sharded "* ]]; then
  stage sharded
  $PY -c "import jax; print('jax', jax.__version__, jax.devices())"
  # tests/test_sharding.py uses the GPUs when there are >= 2 (else the 8 host devices conftest asks for).
  per_test=""; $PY -c "import pytest_timeout" 2>/dev/null && per_test="-p timeout --timeout=120 --timeout-method=thread"
  XLA_PYTHON_CLIENT_PREALLOCATE=false timeout "${JK_SHARDED_TEST_TIMEOUT:-150}" \
    $PY -m pytest -v -rfE -p no:cacheprovider -o addopts="" --durations=5 $per_test \
    "$REPO/tests/test_sharding.py" >"$OUT/sharded_tests.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=$rc
  grep -E "(FAILED|ERROR|Timeout)" "$OUT/sharded_tests.log" | head -20
  tail -1 "$OUT/sharded_tests.log"
  timeout "${JK_SHARDED_BENCH_TIMEOUT:-150}" $PY -m jax_kernels.bench --sharded --json "$OUT/sharded.json" \
    --markdown "$OUT/sharded.md" ${JK_SHARDED_ARGS:-} >"$OUT/sharded.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=$rc
  tail -40 "$OUT/sharded.log"
fi

if [[ " $stages " == *" sanitize "* ]]; then
  stage sanitize
  mkdir -p /tmp/jk_sanitize
  JK_SANITIZE_LOGS=/tmp/jk_sanitize bash "$REPO/bench/sanitize.sh" >"$OUT/sanitize.log" 2>&1
  rc=$?; [ $rc -ne 0 ] && status=$rc
  tar -C /tmp -czf "$OUT/sanitize_logs.tar.gz" jk_sanitize   # one file back, not one per tool
  tail -40 "$OUT/sanitize.log"
fi

echo; echo "gpu_check: exit $status"
exit $status
