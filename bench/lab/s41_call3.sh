#!/usr/bin/env bash
# Session 41, call 3 (H200): the package with RMSNorm's 16-bit 128-column rows on held words (every form: ragged grids
# too): build, tests/test_norms.py (not large), the lab (ours against the packed tier, the previous fallback; held words
# at 16-bit 32 columns as lab kernels), the full benchmark (results under $OUT).
#   bash bench/lab/s41_call3.sh    (needs .dev/s39ptx.so, .dev/s40_op.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
JK_LARGE_TESTS=0 timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 -m "not large" \
  "$REPO/tests/test_norms.py" >"$OUT/tests_norms.log" 2>&1
echo "norms rc=$?"; tail -1 "$OUT/tests_norms.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_norms.log" | head
echo "=== s39_xla_ptx_lab ($(left)s left)"
S41_CALL3=1 S39_ROUNDS=7 S39_LAB_PTX=$REPO/.dev/s40_op.ptx timeout -k 5 150 python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" \
  "$REPO/.dev/s39ptx.so" rms_bf16_128 rms_f16_128 rms_f16_128r rms_bf16_32 rms_f16_32 ln_bf16_32 ln_f16_32 2>&1 \
  | grep -vE "^(WARNING|I0000|W0000)" | grep -vE "^  (PTX|HLO|thunk|launch)" | tee "$OUT/s39_xla_ptx_lab.txt"
echo "=== bench ($(left)s left)"
OUT=$OUT timeout -k 5 $(( $(left) - 5 )) bash "$REPO/bench/gpu_check.sh" bench 2>&1 | tail -3
grep -E "MISSED|targets|geomean" "$OUT/bench.log" | cut -c1-300 | head -12
grep -E "^\| (layer_norm|rms_norm) .* 49152x(32|128) " "$OUT/results.md" | cut -c1-200
