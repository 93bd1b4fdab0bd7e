#!/usr/bin/env bash
# Developer build: compiles the extension with CMake into build/dev and drops it into jax_kernels/, so
# `PYTHONPATH=. pytest tests` runs against the source tree without a pip install.
#   JK_CUDA=OFF|AUTO|ON (default OFF here: fast CPU-only builds), JK_CUDA_ARCHS (default 90a-real).
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
nb_dir=$($py -m nanobind --cmake_dir)
cmake -S . -B build/dev -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSKBUILD_PROJECT_NAME=jax_kernels -Dnanobind_DIR="$nb_dir" -DPython_EXECUTABLE="$(command -v $py)" \
  -DJK_CUDA="${JK_CUDA:-OFF}" -DJK_CUDA_ARCHS="${JK_CUDA_ARCHS:-90a-real}" >/dev/null
cmake --build build/dev -j "${JOBS:-2}"
cp build/dev/_jax_kernels*.so jax_kernels/
echo "built $(ls jax_kernels/_jax_kernels*.so)"
