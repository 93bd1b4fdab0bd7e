#!/usr/bin/env bash
# Session 40, call 12 (H200): the package's RMSNorm kernel for 16-bit rows of 128 columns as a lab kernel
# (bench/lab/s40_onepack_lab.cu: scale loaded after the statistics, as built, or before x) beside jnp and XLA's kernel
# (no package build); then compute-sanitizer memcheck over the one-pack lanes (bench/sanitize.sh, part one_pack_rows:
# it builds the package with bounds assertions).
#   bash bench/lab/s40_call12.sh
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
echo "=== s39_xla_ptx_lab ($(left)s left)"
(cd /tmp && S40_OP_RMS=1 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s40_op.ptx XLA_PYTHON_CLIENT_PREALLOCATE=false \
  timeout -k 5 60 python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" "$REPO/.dev/s39ptx.so" rms_bf16_128 rms_f16_128 2>&1 \
  | grep -vE "^(WARNING|I0000|W0000)" | grep -vE "^  (PTX|HLO|thunk|launch)" | tee "$OUT/s39_xla_ptx_lab.txt")
echo "=== sanitizer ($(left)s left)"
JK_SANITIZE_PARTS=one_pack_rows JK_SANITIZE_TOOLS=memcheck JK_SANITIZE_LOGS=$OUT timeout -k 5 $(( $(left) - 5 )) \
  bash "$REPO/bench/sanitize.sh" 2>&1 | tail -6
