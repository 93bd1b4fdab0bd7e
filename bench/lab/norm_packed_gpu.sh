#!/usr/bin/env bash
# One device call for the packed short-row tier (norm_short_packed.cuh): build (sm_90a), then
# bench/lab/norm_short_lab.py on bf16/f16 rows of 32-256 columns (the default dispatch, the persistent
# short-row tier and its lean variants, 'packed 1/2/4' and jnp, one process), then the row tests of
# tests/test_norms.py with each packed setting forced, then the default suite with the time left.
# Logs under $OUT (build.log, lab.log, tests_packed_*.log, tests.log).
#   bash bench/lab/norm_packed_gpu.sh     (JK_TOTAL_S: seconds the whole call may take, default 290)
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
mkdir -p "$OUT"
T0=$(date +%s)
TOTAL=${JK_TOTAL_S:-290}
left() { echo $(( TOTAL - ($(date +%s) - T0) )); }
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} PYTHONUNBUFFERED=1
OUT=$OUT bash "$REPO/bench/gpu_check.sh" build || exit 1
cd /tmp   # the installed package, not the source tree
l=$(left)
echo "=== lab (${l}s left)"
timeout -k 5 $(( l - 95 )) python3 "$REPO/bench/lab/norm_short_lab.py" --cols 32,64,128,256 --dtypes bf16,f16 \
  --budget $(( l - 120 )) >"$OUT/lab.log" 2>&1
echo "lab rc=$?"
grep -vE "^(WARNING|I0000|W0000)" "$OUT/lab.log" | grep -v "^$" | head -60 | cut -c1-400 | grep -E "^(copy|budget|Trace|[A-Za-z]+Error)"
sed -n '/==== norm_short_lab/,$p' "$OUT/lab.log"
rows_k="rows or nan_poisons or misaligned or one_parameter_row"
for tier in "packed 1" "packed 2" "packed 4"; do
  l=$(left); t=$(( l > 80 ? 25 : l / 4 ))
  log="$OUT/tests_$(echo $tier | tr ' ' '_').log"
  echo "=== tests, JK_NORM_TIER='$tier' (${l}s left, ${t}s)"
  JK_NORM_TIER="$tier" JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 "$t" python3 -m pytest -q \
    -p no:cacheprovider -o addopts="" -n 8 --maxfail=20 -k "$rows_k" "$REPO/tests/test_norms.py" >"$log" 2>&1
  echo "pytest rc=$?"
  grep -E "^(FAILED|ERROR)|passed|failed" "$log" | tail -8 | cut -c1-300
done
l=$(left); t=$(( l - 8 ))
echo "=== tests, default dispatch (${l}s left)"
JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 "$t" python3 -m pytest -q -p no:cacheprovider \
  -o addopts="" -n 8 --maxfail=20 -m "not large" "$REPO/tests/test_norms.py" >"$OUT/tests.log" 2>&1
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests.log" | tail -8 | cut -c1-300
