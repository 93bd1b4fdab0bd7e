#!/usr/bin/env bash
# One device call: build, the whole matmul test file (no -x: every failure listed), the issue's cases,
# then a short compute-sanitizer memcheck over every tier. Usage (repo root): bash bench/lab/matmul_gpu_run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
export OUT=${OUT:-/tmp/jk_out}
mkdir -p "$OUT"
export JK_LARGE_TESTS=1 JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real}  # one architecture: faster builds
start=$(date +%s)
bash bench/gpu_check.sh build || exit 1
cd /tmp
timeout 130 python3 -m pytest -q -p no:cacheprovider --tb=line -rf -k "not test_handler_validation" "$REPO/tests/test_matmul.py" 2>&1 | tee "$OUT/tests.log" | grep -vE "^\.|^$" | tail -45
echo "== tests done at $(( $(date +%s) - start ))s"
timeout 110 python3 "$REPO/bench/lab/matmul_cases.py" 2>&1 | tee "$OUT/cases.log" | tail -16
echo "== cases done at $(( $(date +%s) - start ))s"
# The handler-error tests last: a crash in an error path must not hide the other results.
timeout 40 python3 -m pytest -q -p no:cacheprovider --tb=line -k test_handler_validation "$REPO/tests/test_matmul.py" 2>&1 | tail -3
[ $(( $(date +%s) - start )) -lt 290 ] && timeout $(( 345 - ($(date +%s) - start) )) compute-sanitizer --tool memcheck --print-limit 5 python3 "$REPO/bench/lab/matmul_tiers_smoke.py" 2>&1 | tail -8
