#!/usr/bin/env bash
# Session 14, review (device call 12, H200): the cluster and hybrid launchers on one host helper (common/launch.h
# LaunchClusterGrid; device code unchanged): build, then tests/test_softmax_long.py + tests/test_norms.py (not large).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-280}
l=$(left)
echo "=== cluster-tier tests (${l}s left)"
JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 5 )) python3 -m pytest -q -n 8 -p no:cacheprovider \
  -o addopts= -m "not large" "$REPO/tests/test_softmax_long.py" "$REPO/tests/test_norms.py" >"$OUT/tests.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests.log" | tail -6 | cut -c1-300
