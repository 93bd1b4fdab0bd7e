#!/usr/bin/env bash
# Session 40, call 11 (H200): call 10 with RMSNorm's 16-bit rows of 128 columns also on the one-pack lanes (whole CTAs;
# call 10's benchmark had the packed tier there at 0.96x jnp for float16): build, tests/test_norms.py, the lab against
# the packed tier's default there ("JK_NORM_TIER=packed 2 1"), the full benchmark (results under $OUT).
#   bash bench/lab/s40_call11.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
JK_LARGE_TESTS=0 timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 -m "not large" \
  "$REPO/tests/test_norms.py" >"$OUT/tests_norms.log" 2>&1
echo "norms rc=$?"; tail -1 "$OUT/tests_norms.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_norms.log" | head
echo "=== s39_xla_ptx_lab ($(left)s left)"
S40_TOKENS=1 S40_RMS128=1 timeout -k 5 60 python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" "$REPO/.dev/s39ptx.so" \
  rms_bf16_128 rms_f16_128 2>&1 | grep -vE "^(WARNING|I0000|W0000)" | grep -vE "^  (PTX|HLO|thunk|launch)" \
  | tee "$OUT/s39_xla_ptx_lab.txt"
echo "=== bench ($(left)s left)"
OUT=$OUT timeout -k 5 $(( $(left) - 5 )) bash "$REPO/bench/gpu_check.sh" bench 2>&1 | tail -3
grep -E "MISSED|targets|geomean" "$OUT/bench.log" | cut -c1-300 | head -12
grep -E "^\| (layer_norm|rms_norm) .* 49152x(32|128) " "$OUT/results.md" | cut -c1-200
