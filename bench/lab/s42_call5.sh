#!/usr/bin/env bash
# Session 42, call 5 (H200): LayerNorm's sums of x and x^2 reduced together (OnePackLayout's kSumsFirst) against the
# two passes on the 32-column layouts (float32 at 4 and 2 rows a thread), bf16 64 columns, and float32 rows of mean 4
# (the second pass). bench/lab/s40_onepack_lab.cu; no package build; medians of 100 calls, best of 7 rotated rounds.
#   bash bench/lab/s42_call5.sh    (needs .dev/s39ptx.so, .dev/s40_op.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
echo "=== s39_xla_ptx_lab ($(left)s left)"
(cd /tmp && S42_LN32=5 S39_ITERS=100 S39_ROUNDS=7 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s40_op.ptx,$REPO/.dev/s42_ln32.ptx \
  S41_NO_XLA=ln_f32_32,ln_f32_32m XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 400 python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" \
  "$REPO/.dev/s39ptx.so" ln_f32_32 ln_f32_32m ln_bf16_32 ln_f16_32 ln_bf16_64 2>&1 \
  | grep -vE "^(WARNING|I0000|W0000)" | grep -vE "^  (PTX|HLO|thunk|launch)" | tee "$OUT/s39_xla_ptx_lab.txt")
