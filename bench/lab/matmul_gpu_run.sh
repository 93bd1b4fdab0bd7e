#!/usr/bin/env bash
# One device call: build, the whole matmul test file (no -x: every failure listed), the issue's cases,
# then a short compute-sanitizer memcheck over every tier. Usage (repo root): bash bench/lab/matmul_gpu_run.sh
# Uses python3 -m pip / pytest: the bare `pip` on the GPU machine belongs to another interpreter.
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
OUT=${OUT:-/tmp/jk_out}
mkdir -p "$OUT"
export JK_CUDA=ON JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} PYTHONUNBUFFERED=1 JK_LARGE_TESTS=1
start=$(date +%s)
if ! python3 -m pip install --no-build-isolation --no-deps -q . >"$OUT/build.log" 2>&1; then tail -60 "$OUT/build.log"; exit 1; fi
echo "== built in $(( $(date +%s) - start ))s"
cd /tmp
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
if ! timeout 60 python3 "$REPO/bench/lab/matmul_diag.py" >"$OUT/diag.log" 2>&1; then
  grep -v "^  File" "$OUT/diag.log" | tail -20
  command -v gdb >/dev/null && timeout 90 gdb -q -batch -ex run -ex "bt 30" --args python3 "$REPO/bench/lab/matmul_diag.py" 2>&1 | grep -E "^#|signal" | head -40
  exit 1
fi
tail -8 "$OUT/diag.log"
timeout 130 python3 -m pytest -q -p no:cacheprovider --tb=line -rf -k "not test_handler_validation" "$REPO/tests/test_matmul.py" 2>&1 | tee "$OUT/tests.log" | grep -vE "^\.|^$" | tail -45
echo "== tests done at $(( $(date +%s) - start ))s"
timeout 110 python3 "$REPO/bench/lab/matmul_cases.py" 2>&1 | tee "$OUT/cases.log" | tail -16
echo "== cases done at $(( $(date +%s) - start ))s"
# The handler-error tests last: a crash in an error path must not hide the other results.
timeout 40 python3 -m pytest -q -p no:cacheprovider --tb=line -k test_handler_validation "$REPO/tests/test_matmul.py" 2>&1 | tail -3
[ $(( $(date +%s) - start )) -lt 290 ] && timeout $(( 345 - ($(date +%s) - start) )) compute-sanitizer --tool memcheck --print-limit 5 python3 "$REPO/bench/lab/matmul_tiers_smoke.py" 2>&1 | tail -8
