#!/usr/bin/env bash
# One GPU-machine session for the transpose work (fits a 360 s call): build the package and the lab
# program in parallel, run the lab, the issue-5 cases, then the transpose tests (large cases on) with
# whatever time is left; logs under $OUT; the summaries are printed last (the device tool returns only
# the output's tail).
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
export OUT=${OUT:-/tmp/jk_out}
mkdir -p "$OUT"
export JK_LARGE_TESTS=1 JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real}  # one architecture: faster builds
DEADLINE=${DEADLINE:-345}
start=$(date +%s)
left() { echo $(( DEADLINE - ($(date +%s) - start) )); }
nvcc -O3 -std=c++17 -arch=sm_90a -Icuda bench/lab/transpose_lab.cu -o /tmp/tlab >"$OUT/lab_build.log" 2>&1 &
NV=$!
bash bench/gpu_check.sh build || exit 1
wait $NV || tail -30 "$OUT/lab_build.log"
timeout 60 /tmp/tlab ${LAB_ARGS:-} >"$OUT/lab.log" 2>&1; echo "lab rc=$? at $(( $(date +%s) - start ))s"
cd /tmp
timeout 150 python3 "$REPO/bench/lab/transpose_cases.py" >"$OUT/cases.log" 2>&1
echo "cases rc=$? at $(( $(date +%s) - start ))s"
timeout $(( $(left) > 20 ? $(left) : 20 )) python3 -m pytest -q -p no:cacheprovider --durations=5 \
  "$REPO/tests/test_transpose.py" >"$OUT/tests.log" 2>&1
echo "tests rc=$? at $(( $(date +%s) - start ))s"
echo "== tests"; grep -E "^(FAILED|ERROR)|Error:" "$OUT/tests.log" | head -12; tail -8 "$OUT/tests.log"
echo "== cases"; tail -28 "$OUT/cases.log"
echo "== lab"; cat "$OUT/lab.log"
