#!/usr/bin/env bash
# Session 22, call 5 (H200): SimtPanel's 16x32 tile (the default in this build) and 32x64 tile: build, the exact
# float32 tests of test_matmul.py, then s22_simt_lab.py.
REPO=$(cd "$(dirname "$0")/../.." && pwd)
JK_TOTAL_S=${JK_TOTAL_S:-400} exec bash "$REPO/bench/lab/lab_call.sh" s22_simt_lab.py \
  "panel or float32 or unaligned or empty or broadcast or epilogue or handler" tests/test_matmul.py
