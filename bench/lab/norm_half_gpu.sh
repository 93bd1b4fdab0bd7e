#!/usr/bin/env bash
# One device call for the norm lab: build (sm_90a), tests/test_norms.py on the GPU (the default dispatch,
# then the row-tier tests again with JK_NORM_TIER=proposed), then bench/lab/norm_half_lab.py with the time
# that is left. Logs under $OUT (build.log, tests.log, tests_proposed.log, lab.log).
# First run (08:04 UTC, H200): build 27 s; the tests fail fast when the candidate tier cannot launch.
# Check on the CPU first: bash bench/lab/norm_emulate.sh (every tier, ~8 min on 2 cores).
#   bash bench/lab/norm_half_gpu.sh        (JK_TOTAL_S: the seconds the whole call may take, default 285)
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 285
l=$(left); t=$(( l > 200 ? 70 : l / 4 ))
echo "=== tests, default dispatch (${l}s left, ${t}s for them)"
JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 "$t" python3 -m pytest -q -p no:cacheprovider \
  -o addopts="" -n 8 --maxfail=30 "$REPO/tests/test_norms.py" >"$OUT/tests.log" 2>&1
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests.log" | tail -15
# The candidate dispatch (bulk-copy tier, early parameter loads) on every row-tier test.
l=$(left); t=$(( l > 160 ? 50 : l / 4 ))
echo "=== tests, JK_NORM_TIER=proposed (${l}s left, ${t}s for them)"
JK_NORM_TIER=proposed JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 "$t" python3 -m pytest -q \
  -p no:cacheprovider -o addopts="" -n 8 --maxfail=30 -k "rows or large_mean or nan_poisons or vmap or property or misaligned" \
  "$REPO/tests/test_norms.py" >"$OUT/tests_proposed.log" 2>&1
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_proposed.log" | tail -15
l=$(left)
echo "=== lab (${l}s left)"
python3 "$REPO/bench/lab/norm_half_lab.py" --budget $(( l - 12 )) >"$OUT/lab.log" 2>&1
grep -E "^\[" "$OUT/lab.log" | head -30
sed -n '/==== norm_half_lab/,$p' "$OUT/lab.log"
