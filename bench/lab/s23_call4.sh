#!/usr/bin/env bash
# Session 23, call 4 (H200): build; the wgmma tests with the 2 x 2 clusters (w64_mc4) and the defaults, the exact
# float32 ring tests; then bench/lab/s23_quad_lab.py with S23_LAB=ring.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 200 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= "$REPO/tests/test_matmul.py" \
  -k "wgmma or float32_simt or float32_ring" >"$OUT/tests_lab.log" 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_lab.log" | tail -15 | cut -c1-250
echo "=== lab ($(left)s left)"
S23_LAB=ring XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( $(left) - 10 )) \
  python3 "$REPO/bench/lab/s23_quad_lab.py" 2>&1 | tee "$OUT/lab.log" | grep -E "^\||device|FAILED|Error" | head -120
