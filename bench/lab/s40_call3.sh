#!/usr/bin/env bash
# Session 40, call 3 (H200): build (the one-pack lanes for bf16/f16 32 and 128 columns and float32 32,
# norm_short_onepack.cuh); tests/test_norms.py (default dispatch), the row tests under each forced load order
# (JK_NORM_TIER="onepack 0/1/2"); then ours against jnp, XLA's kernel, the lab's best kernels and the tokens of
# bench/lab/s39_xla_ptx_lab.py (S40_TOKENS, S40_LAB_REFS).
#   bash bench/lab/s40_call3.sh [CASE ...]
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
echo "=== norm tests ($(left)s left)"
JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 200 python3 -m pytest -q -p no:cacheprovider \
  -o addopts="" -n 8 --maxfail=20 -m "not large" "$REPO/tests/test_norms.py" >"$OUT/tests_norms.log" 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_norms.log" | tail -8 | cut -c1-300
norm_tier_tests "rows or one_pack or large_mean" 300 60 4 "onepack 0" "onepack 1" "onepack 2"
echo "=== s39_xla_ptx_lab ($(left)s left)"
set -- ${@:-ln_bf16_32 ln_f16_32 rms_bf16_32 rms_f16_32 ln_bf16_128 ln_f16_128 rms_bf16_128 rms_f16_128 ln_f32_32 rms_f32_32}
S40_TOKENS=1 S40_LAB_REFS=1 S39_ARGORDER="ln_f32_32=1,0,2" S39_LAB_PTX=$REPO/.dev/s39_norm_lab.ptx \
  XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( $(left) - 10 )) \
  python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" "$REPO/.dev/s39ptx.so" "$@" 2>&1 | grep -vE "^(WARNING|I0000|W0000)" \
  | grep -vE "^  (PTX|HLO|thunk)" | tee "$OUT/s39_xla_ptx_lab.txt"
