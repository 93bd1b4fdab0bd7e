#!/usr/bin/env bash
# Session 39, call 13 (H200): build (bf16/f16 LayerNorm / RMSNorm rows of 32 columns on the one-pack lanes,
# norm_short_onepack.cuh); tests/test_norms.py (default dispatch); the one-pack lanes against the packed tier's default
# ("JK_NORM_TIER=packed 2 1"), jnp and XLA's kernel as our custom call (bench/lab/s39_xla_ptx_lab.py).
#   bash bench/lab/s39_call13.sh   (the one-pack kernel in the lab form tri_early_checked, beside it)
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
echo "=== norm tests ($(left)s left)"
JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 240 python3 -m pytest -q -p no:cacheprovider \
  -o addopts="" -n 8 --maxfail=20 -m "not large" "$REPO/tests/test_norms.py" >"$OUT/tests_norms.log" 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_norms.log" | tail -8 | cut -c1-300
echo "=== s39_xla_ptx_lab ($(left)s left)"
set -- ${@:-ln_bf16_32 ln_f16_32 rms_bf16_32 rms_f16_32}
S39_LAB_PTX=$REPO/.dev/s39_norm_lab.ptx XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( $(left) - 10 )) \
  python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" "$REPO/.dev/s39ptx.so" "$@" 2>&1 | grep -vE "^(WARNING|I0000|W0000)" \
  | tee "$OUT/s39_xla_ptx_lab.txt"
