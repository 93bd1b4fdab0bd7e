#!/usr/bin/env bash
# Session 42, call 1 (H200): float32 LayerNorm 32 columns, the lab kernels of bench/lab/s42_ln32_lab.cu (floors, one
# reduction, Chan's one-pass statistics, other layouts) beside the package's device code (op_lnf32_32), jnp and XLA's
# kernel; no package build. Medians of 10 calls (the benchmark's), best of 7 rotated rounds; then medians of 100.
#   bash bench/lab/s42_call1.sh    (needs .dev/s39ptx.so, .dev/s40_op.ptx, .dev/s42_ln32.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
for iters in 10 100; do
  echo "=== s39_xla_ptx_lab, medians of $iters ($(left)s left)"
  (cd /tmp && S42_LN32=1 S39_ITERS=$iters S39_ROUNDS=7 S39_NO_PACKAGE=1 \
    S39_LAB_PTX=$REPO/.dev/s40_op.ptx,$REPO/.dev/s42_ln32.ptx XLA_PYTHON_CLIENT_PREALLOCATE=false \
    timeout -k 5 250 python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" "$REPO/.dev/s39ptx.so" ln_f32_32 2>&1 \
    | grep -vE "^(WARNING|I0000|W0000)" | grep -vE "^  (PTX|HLO|thunk|launch)" | tee "$OUT/s39_xla_ptx_lab_$iters.txt")
done
