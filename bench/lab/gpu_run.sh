#!/usr/bin/env bash
# One GPU-machine session for the transpose work: build the package and the lab program in parallel,
# run the lab, the transpose tests (large cases on), the issue-5 cases; logs under $OUT, and the lab
# table printed again last (the device tool returns only the output's tail).
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
OUT=${OUT:-/tmp/jk_out}
mkdir -p "$OUT"
export JK_CUDA=ON JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} PYTHONUNBUFFERED=1 JK_LARGE_TESTS=1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader; which python3; python3 -c "import scikit_build_core, nanobind, jax; print(jax.__version__)"
start=$(date +%s)
nvcc -O3 -std=c++17 -arch=sm_90a -Icuda bench/lab/transpose_lab.cu -o /tmp/tlab >"$OUT/lab_build.log" 2>&1 &
NV=$!
if ! python3 -m pip install --no-build-isolation --no-deps -q . >"$OUT/build.log" 2>&1; then
  tail -60 "$OUT/build.log"; exit 1
fi
echo "package built in $(( $(date +%s) - start ))s"
wait $NV || tail -30 "$OUT/lab_build.log"
echo "lab built at $(( $(date +%s) - start ))s"
timeout 90 /tmp/tlab ${LAB_ARGS:-} >"$OUT/lab.log" 2>&1; echo "lab rc=$? at $(( $(date +%s) - start ))s"
cd /tmp
timeout ${TEST_TIMEOUT:-120} python3 -m pytest -q -x -p no:cacheprovider "$REPO/tests/test_transpose.py" 2>&1 | tee "$OUT/tests.log" | tail -25
echo "tests done at $(( $(date +%s) - start ))s"
timeout ${CASES_TIMEOUT:-140} python3 "$REPO/bench/lab/transpose_cases.py" 2>&1 | tee "$OUT/cases.log" | tail -30
echo "cases done at $(( $(date +%s) - start ))s"
echo "== lab"; cat "$OUT/lab.log"
