#!/usr/bin/env bash
# Session 41, call 6 (H200): compute-sanitizer memcheck over the one-pack lanes (bench/sanitize.sh part one_pack_rows,
# a bounds-checked build: RMSNorm's 16-bit 128-column held words on whole and ragged grids among them).
#   bash bench/lab/s41_call6.sh
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
echo "=== sanitizer ($(left)s left)"
JK_SANITIZE_PARTS=one_pack_rows JK_SANITIZE_TOOLS=memcheck JK_SANITIZE_LOGS=$OUT timeout -k 5 $(( $(left) - 5 )) \
  bash "$REPO/bench/sanitize.sh" 2>&1 | tail -6
