#!/usr/bin/env bash
# Diagnostic device call: build, then locate a host-side crash (gdb backtrace when gdb exists).
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
OUT=${OUT:-/tmp/jk_out}; mkdir -p "$OUT"
export JK_CUDA=ON JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} PYTHONUNBUFFERED=1
python3 -m pip install --no-build-isolation --no-deps -q . >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
cd /tmp
python3 -c "import jax_kernels, os; print(jax_kernels.__file__); print(os.listdir(os.path.dirname(jax_kernels.__file__)))"
nm -D --defined-only "$(python3 -c 'import jax_kernels._jax_kernels as m; print(m.__file__)')" | grep -ci " cuda" 
timeout 60 python3 "$REPO/bench/lab/matmul_diag.py" 2>&1 | grep -v "^  File" | tail -25
if command -v gdb >/dev/null; then
  timeout 90 gdb -q -batch -ex run -ex "bt 30" --args python3 "$REPO/bench/lab/matmul_diag.py" 2>&1 | grep -E "^#|DIAG|signal|rel err" | head -45
else
  echo "no gdb"
fi
