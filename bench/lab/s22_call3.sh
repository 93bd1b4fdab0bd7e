#!/usr/bin/env bash
# Session 22, call 3 (H200): SimtPanel and the residual's short-K rule: build, the exact float32 and panel tests of
# test_matmul.py and test_linear_epilogue.py whole, s22_simt_lab.py, s22_linear_lab.py's call-3 cases, the GPT-2
# forward (bench model).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
JK_TOTAL_S=300 OUT=$OUT bash "$REPO/bench/lab/lab_call.sh" s22_simt_lab.py "panel or float32 or split or schedules or tiles or wgmma_fused or residual" \
  tests/test_matmul.py tests/test_linear_epilogue.py
cp "$OUT/lab.log" "$OUT/simt_lab.log"
cd /tmp
XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer= S22_LAB=3 timeout -k 5 120 \
  python3 "$REPO/bench/lab/s22_linear_lab.py" 8192,4096 2>&1 | tee "$OUT/linear_lab.log" | grep -E "^\| (linear|gpt)|FAILED|Error"
OUT=$OUT bash "$REPO/bench/gpu_check.sh" model 2>&1 | grep -E "speedup"
