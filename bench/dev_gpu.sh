#!/usr/bin/env bash
# Development run on the device machine: build (one architecture, for speed), run some tests, run one
# script. Usage: bash bench/dev_gpu.sh "tests/test_a.py tests/test_b.py" "bench/lab/x.py --flag"
# Logs go to $OUT (the device tool brings them back).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
export OUT=${OUT:-/tmp/jk_out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}  # a bare `pip` may belong to another Python than the one with jax
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} PYTHONUNBUFFERED=1
bash bench/gpu_check.sh build || exit 1
cd /tmp   # import the installed package, not the source tree
if [ -n "${1:-}" ]; then
  echo "== tests"
  $PY -m pytest -q -x -p no:cacheprovider $(for t in $1; do echo "$REPO/$t"; done) 2>&1 | tee "$OUT/tests.log" | tail -40
fi
if [ -n "${2:-}" ]; then
  echo "== script"
  # shellcheck disable=SC2086
  $PY "$REPO"/$2 2>&1 | tee "$OUT/script.log"
fi
