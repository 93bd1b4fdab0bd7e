#!/usr/bin/env bash
# Session 5's targeted GPU check (one device call): build, the TF32 tests (linear's epilogue on the wgmma
# TF32 tier, new this session), the TF32 linear timing, the float32 ring rows of the
# benchmark (no regression from the ring's new proxy fence and exit barrier), then memcheck, racecheck and
# initcheck over the long-row and matmul cases only, on the release build (no bounds assertions).
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/s5}
mkdir -p "$OUT"
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} XLA_PYTHON_CLIENT_PREALLOCATE=false
bash "$REPO/bench/gpu_check.sh" build || exit 1
cd /tmp
timeout 200 python3 -m pytest -q -n 12 -p no:cacheprovider -o addopts= -rfE \
  "$REPO/tests/test_matmul_tf32.py" "$REPO/tests/test_matmul.py::test_linear_every_tier_default_precision" \
  >"$OUT/tests_s5.log" 2>&1
tail -15 "$OUT/tests_s5.log"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout 100 python3 "$REPO/bench/lab/matmul_tf32_lab.py" linear \
  >"$OUT/tf32_linear.txt" 2>&1
tail -8 "$OUT/tf32_linear.txt"
timeout 120 python3 -m jax_kernels.bench --ops softmax,rms_norm,layer_norm --dtypes f32 --no-progress \
  >"$OUT/bench_f32_rows.txt" 2>&1
grep -E "32768|65536|16384" "$OUT/bench_f32_rows.txt" | head -20
JK_SANITIZE_NO_REBUILD=1 JK_SANITIZE_TOOLS="memcheck racecheck initcheck" JK_SANITIZE_PARTS=long_rows,matmuls JK_SANITIZE_LOGS=/tmp/jk_san \
  JK_SANITIZE_TIMEOUT=200 bash "$REPO/bench/sanitize.sh" >"$OUT/sanitize_s5.log" 2>&1
cat "$OUT/sanitize_s5.log" | head -40
tar -C /tmp -czf "$OUT/sanitize_s5_logs.tar.gz" jk_san
