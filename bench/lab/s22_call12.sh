#!/usr/bin/env bash
# Session 22, call 12 (H200): the merged exact float32 test (test_matmul_float32_simt: every JK_MATMUL_SIMT form over
# both shape lists) and the rest of test_matmul.py's float32 tests, after a build.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-400}
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 240 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
  "$REPO/tests/test_matmul.py" -k "float32 or ring" >"$OUT/tests_lab.log" 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_lab.log" | tail -15 | cut -c1-200
