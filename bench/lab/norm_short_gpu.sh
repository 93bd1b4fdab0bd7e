#!/usr/bin/env bash
# One device call for the short-row norm lab: build (sm_90a), bench/lab/norm_short_lab.py (default dispatch
# vs the persistent short-row tier vs jnp, one process), then tests/test_norms.py with the short-row tier
# forced on the row tests (JK_NORM_TIER="short 2 1 0", "short 4 0 0", "short 2 1 0 1"), then the default tests
# with the time left. Logs under $OUT (build.log, lab.log, tests_short*.log, tests.log). First run: 2026-11-21
# (bench/lab/norm_short_h200.md), 87 s in all; the lean variants ('short R F M 1') came after it.
#   bash bench/lab/norm_short_gpu.sh     (JK_TOTAL_S: seconds the whole call may take, default 290)
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
timeout -k 5 $(( l - 100 )) python3 "$REPO/bench/lab/norm_short_lab.py" --budget $(( l - 125 )) >"$OUT/lab.log" 2>&1
echo "lab rc=$?"
grep -vE "^(WARNING|I0000|W0000)" "$OUT/lab.log" | grep -v "^$" | head -60 | cut -c1-400 | grep -E "^(copy|budget|Trace|[A-Za-z]+Error)" 
sed -n '/==== norm_short_lab/,$p' "$OUT/lab.log"
rows_k="rows or large_mean or nan_poisons or vmap or property or misaligned or stats"
for tier in "short 2 1 0" "short 4 0 0" "short 2 1 0 1"; do
  l=$(left); t=$(( l > 90 ? 35 : l / 3 ))
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
