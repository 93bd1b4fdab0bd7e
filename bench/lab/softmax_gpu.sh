#!/usr/bin/env bash
# One GPU-machine session for softmax: build, sweep (+ copy ceiling + masked case), the softmax tests on
# the CUDA backend (large cases on), then the tier knobs on the long rows. Logs under $OUT; the summary
# table is printed again last (the device tool returns only the tail).
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
export OUT=${OUT:-/tmp/jk_out}
mkdir -p "$OUT"
PY=python3  # the image's python3 holds jax; a bare `pip` may belong to another interpreter
start=$(date +%s)
t() { echo "[$(( $(date +%s) - start ))s] $*"; }
JK_CUDA_ARCHS=90a-real bash bench/gpu_check.sh build || exit 1
t "built"
cd /tmp
timeout "${SWEEP_TIMEOUT:-120}" $PY "$REPO/bench/lab/softmax_sweep.py" --kernels --json "$OUT/sweep.jsonl" >"$OUT/sweep.log" 2>&1
t "sweep rc=$?"
XLA_PYTHON_CLIENT_PREALLOCATE=false JK_LARGE_TESTS=1 timeout "${TEST_TIMEOUT:-80}" \
  $PY -m pytest -q -x -p no:cacheprovider -n 6 "$REPO/tests/test_softmax.py" >"$OUT/tests.log" 2>&1
t "tests rc=$?"; grep -E "passed|failed|Error|error" "$OUT/tests.log" | tail -12
knob() {  # knob "ENV=VALUE [ENV=VALUE]" cols...   (the knobs are read once per process)
  local env=$1; shift
  env $env timeout 20 $PY "$REPO/bench/lab/softmax_sweep.py" --ours-only --no-ceiling --no-mask --ops softmax \
    --dtypes bfloat16 float32 --cols "$@" 2>&1 | grep '^point' | awk -v e="$env" '{print e, $3, $4, $6, $12}'
}
{
  knob "JK_SOFTMAX_MAX_CLUSTER=8" 8192 16384 32768
  knob "JK_SOFTMAX_MAX_CLUSTER=8 JK_SOFTMAX_CTA_THREADS=512" 16384 32768 65536
  knob "JK_SOFTMAX_WARP_MAX=512" 1024
  knob "JK_SOFTMAX_BLOCK_MAX=1024" 2048 4096 8192
} >"$OUT/knobs.log" 2>&1
t "knobs done"
echo "== knobs (GB/s, ours only)"; cat "$OUT/knobs.log"
echo "== sweep"; grep -v '^point' "$OUT/sweep.log" | tail -n 70
