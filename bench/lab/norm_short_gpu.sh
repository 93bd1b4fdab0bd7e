#!/usr/bin/env bash
# One device call for the short-row norm lab: build (sm_90a), bench/lab/norm_short_lab.py (default dispatch
# vs the persistent short-row tier vs jnp, one process), then tests/test_norms.py with the short-row tier
# forced on the row tests (JK_NORM_TIER="short 2 1 0", "short 4 0 0", "short 2 1 0 1"), then the default tests
# with the time left. Logs under $OUT (build.log, lab.log, tests_short*.log, tests.log). First run: 2026-11-21
# (bench/lab/norm_short_h200.md), 87 s in all; the lean variants ('short R F M 1') came after it.
#   bash bench/lab/norm_short_gpu.sh     (JK_TOTAL_S: seconds the whole call may take, default 290)
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 290
norm_short_lab 100 125
norm_tier_tests "rows or large_mean or nan_poisons or vmap or property or misaligned or stats" 90 35 3 \
  "short 2 1 0" "short 4 0 0" "short 2 1 0 1"
norm_default_tests
