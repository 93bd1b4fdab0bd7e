#!/usr/bin/env bash
# Diagnostic device call for a host-side crash: in-tree CMake build (unstripped), run the diag script with
# a SIGSEGV backtrace printer preloaded, symbolise the frames inside our module.
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
OUT=${OUT:-/tmp/jk_out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
gcc -shared -fPIC -O1 bench/lab/matmul_segv_trace.c -o /tmp/segv_trace.so -ldl || echo "no segv tracer"
# RelWithDebInfo: nanobind strips Release modules, and the frames need symbols.
{ cmake -S . -B build/diag -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSKBUILD_PROJECT_NAME=jax_kernels \
    -Dnanobind_DIR="$(python3 -m nanobind --cmake_dir)" -DPython_EXECUTABLE="$(command -v python3)" \
    -DJK_CUDA=ON -DJK_CUDA_ARCHS=90a-real && cmake --build build/diag -j 16 && cp build/diag/_jax_kernels*.so jax_kernels/; } \
  >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
SO=$(ls "$REPO"/jax_kernels/_jax_kernels*.so)
cd /tmp
PYTHONPATH=$REPO LD_PRELOAD=/tmp/segv_trace.so timeout 60 python3 "$REPO/bench/lab/matmul_diag.py" >"$OUT/diag.log" 2>&1
echo "diag rc=$?"
grep -v "^  File\|SEGV_TRACE" "$OUT/diag.log" | tail -12
grep SEGV_TRACE "$OUT/diag.log" | head -30 | cut -c1-220
grep "SEGV_TRACE #" "$OUT/diag.log" | grep "_jax_kernels" | head -12 | while read -r _ _ lib off _; do
  addr2line -f -C -e "$lib" "$off" | head -1
done
