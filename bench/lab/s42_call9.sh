#!/usr/bin/env bash
# Session 42, call 9 (H200): compute-sanitizer memcheck over the one-pack lanes (bench/sanitize.sh part one_pack_rows,
# a bounds-checked build: float32 32 and 16-bit 64 columns at 2 rows a thread among them).
#   bash bench/lab/s42_call9.sh
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
echo "=== sanitizer ($(left)s left)"
JK_SANITIZE_PARTS=one_pack_rows JK_SANITIZE_TOOLS=memcheck JK_SANITIZE_LOGS=$OUT timeout -k 5 $(( $(left) - 5 )) \
  bash "$REPO/bench/sanitize.sh" 2>&1 | tail -6
