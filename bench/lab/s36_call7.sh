#!/usr/bin/env bash
# Session 36, call 7 (H200): compute-sanitizer memcheck over the short-run and transpose parts (runs of 16-256 bytes
# on the lean input-order row copy; its own debug build), then the model, reliability and bench test files on a
# release build when time is left.
#   bash bench/lab/s36_call7.sh
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real}
echo "=== sanitizer ($(left)s left)"
JK_SANITIZE_PARTS=short_runs,transposes JK_SANITIZE_TOOLS=memcheck JK_SANITIZE_LOGS=$OUT/san JK_SANITIZE_TIMEOUT=300 \
  timeout -k 5 400 bash "$REPO/bench/sanitize.sh" 2>&1 | tail -6
echo "=== done ($(left)s left)"
