#!/usr/bin/env bash
# Session 40, call 4 (H200): call 3 after the one-pack kernel took 32-bit offsets and its statistics became a separate
# instantiation stored by one lane a row (norm_short_onepack.cuh): build; the norm tests (default dispatch, then the
# row tests under "onepack 0" / "onepack 1"); the lab of call 3; return_stats's cost at 32 and 128 columns
# (bench/lab/s36_stats_lab.py).
#   bash bench/lab/s40_call4.sh [CASE ...]
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
echo "=== norm tests ($(left)s left)"
JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 200 python3 -m pytest -q -p no:cacheprovider \
  -o addopts="" -n 8 --maxfail=20 -m "not large" "$REPO/tests/test_norms.py" >"$OUT/tests_norms.log" 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_norms.log" | tail -8 | cut -c1-300
norm_tier_tests "(rows and (32 or 128)) or one_pack" 300 60 4 "onepack 0" "onepack 1"
echo "=== s39_xla_ptx_lab ($(left)s left)"
set -- ${@:-ln_bf16_32 ln_f16_32 rms_bf16_32 rms_f16_32 ln_bf16_128 ln_f16_128 rms_bf16_128 rms_f16_128 ln_f32_32 rms_f32_32}
S40_TOKENS=1 S40_LAB_REFS=1 S39_ARGORDER="ln_f32_32=1,0,2" S39_LAB_PTX=$REPO/.dev/s39_norm_lab.ptx \
  XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( $(left) - 70 )) \
  python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" "$REPO/.dev/s39ptx.so" "$@" 2>&1 | grep -vE "^(WARNING|I0000|W0000)" \
  | grep -vE "^  (PTX|HLO|thunk)" | tee "$OUT/s39_xla_ptx_lab.txt"
echo "=== s36_stats_lab 32, 128 ($(left)s left)"
S36_COLS=32,128 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( $(left) - 5 )) \
  python3 "$REPO/bench/lab/s36_stats_lab.py" 2>&1 | grep -vE "^(WARNING|I0000|W0000)" | tee "$OUT/s36_stats_lab.txt"
