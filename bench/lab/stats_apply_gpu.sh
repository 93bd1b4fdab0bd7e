#!/usr/bin/env bash
# One GPU-machine call for the stats/apply kernels: build, the before/after lab (printed last), the tests on
# the CUDA backend (the apply tests again with the lab's U=2 knob). Logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
export OUT=${OUT:-/tmp/jk_out}
mkdir -p "$OUT"
PY=python3
start=$(date +%s)
t() { echo "[$(( $(date +%s) - start ))s] $*"; }
JK_CUDA_ARCHS=90a-real bash bench/gpu_check.sh build || exit 1
t "built"
cd /tmp
timeout "${LAB_TIMEOUT:-120}" $PY "$REPO/bench/lab/stats_apply_lab.py" >"$OUT/lab.log" 2>&1
t "lab rc=$?"
export XLA_PYTHON_CLIENT_PREALLOCATE=false
timeout "${TEST_TIMEOUT:-80}" $PY -m pytest -q -x -p no:cacheprovider -n 8 "$REPO/tests/test_stats_apply.py" \
  >"$OUT/tests.log" 2>&1
t "tests rc=$?"; grep -E "passed|failed|Error|error" "$OUT/tests.log" | tail -12
JK_STATS_APPLY_UNROLL=2 timeout 40 $PY -m pytest -q -x -p no:cacheprovider -n 8 -k "apply and not softmax" \
  "$REPO/tests/test_stats_apply.py" >"$OUT/tests_u2.log" 2>&1
t "tests U=2 rc=$?"; tail -3 "$OUT/tests_u2.log"
timeout 40 $PY -m pytest -q -p no:cacheprovider -n 8 -k "stats or apply" "$REPO/tests/test_norms.py" \
  "$REPO/tests/test_softmax.py" >"$OUT/tests_old.log" 2>&1
t "norms/softmax stats tests rc=$?"; tail -3 "$OUT/tests_old.log"
echo "== lab"; cat "$OUT/lab.log"
