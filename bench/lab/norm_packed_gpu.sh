#!/usr/bin/env bash
# One device call for the packed short-row tier (norm_short_packed.cuh): build (sm_90a), then
# bench/lab/norm_short_lab.py on bf16/f16 rows of 32-256 columns (the default dispatch, the persistent
# short-row tier and its lean variants, 'packed 1/2/4' and jnp, one process), then the row tests of
# tests/test_norms.py with each packed setting forced, then the default suite with the time left.
# Logs under $OUT (build.log, lab.log, tests_packed_*.log, tests.log).
#   bash bench/lab/norm_packed_gpu.sh     (JK_TOTAL_S: seconds the whole call may take, default 290)
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 290
norm_short_lab 95 120 --cols 32,64,128,256 --dtypes bf16,f16
norm_tier_tests "rows or nan_poisons or misaligned or one_parameter_row" 80 25 4 "packed 1" "packed 2" "packed 4"
norm_default_tests
