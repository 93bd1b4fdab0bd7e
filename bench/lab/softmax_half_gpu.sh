#!/usr/bin/env bash
# One GPU-machine session for the 16-bit softmax work (issue 4): build, bench/lab/softmax_half_lab.py,
# then tests/test_softmax.py (with the tier-knob subprocess checks) in the time left. Logs under $OUT; the
# lab's table is printed last (the device tool returns only the tail).
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
export OUT=${OUT:-/tmp/jk_out}
mkdir -p "$OUT"
start=$(date +%s)
t() { echo "[$(( $(date +%s) - start ))s] $*"; }
JK_CUDA_ARCHS=90a-real bash bench/gpu_check.sh build >"$OUT/build_stage.log" 2>&1 || {
  tail -60 "$OUT/build_stage.log"; exit 1; }
t "built"
cd /tmp
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # the lab's knob subprocesses share the GPU with their parent
left=$(( ${BUDGET:-290} - ($(date +%s) - start) ))
lab=$(( left - 80 < 150 ? left - 80 : 150 ))  # the lab first, the tests get the rest (>= 75 s)
timeout "$lab" python3 "$REPO/bench/lab/softmax_half_lab.py" --budget $((lab - 5)) --json "$OUT/half_lab.jsonl" \
  >"$OUT/half_lab.log" 2>&1
t "lab rc=$?"
left=$(( ${BUDGET:-290} - ($(date +%s) - start) ))
timeout "$left" python3 -m pytest -q -rfE -p no:cacheprovider -n 8 "$REPO/tests/test_softmax.py" \
  >"$OUT/tests.log" 2>&1
t "tests rc=$?"
grep -E "^variant|Error" "$OUT/half_lab.log" | cut -c1-300 | head
sed -n '/== softmax_half_lab/,$p' "$OUT/half_lab.log" | grep . || tail -50 "$OUT/half_lab.log"
grep -E "FAILED|ERROR|passed|failed" "$OUT/tests.log" | cut -c1-300 | tail -15
