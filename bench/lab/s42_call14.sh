#!/usr/bin/env bash
# Session 42, call 14 (H200): the review's large-mean test on the one-pack lanes (tests/test_norms.py -k "large_mean
# or one_pack") with the final kernels.
#   bash bench/lab/s42_call14.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 300 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 8 \
  -k "large_mean or one_pack" "$REPO/tests/test_norms.py" 2>&1 | tail -30
