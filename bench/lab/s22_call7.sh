#!/usr/bin/env bash
# Session 22, call 7 (H200): SimtRing (16x32 tiles of 64 threads, the default below one wave of 64x64 tiles in this
# build): build, the exact float32 tests of test_matmul.py, then s22_simt_lab.py (S22_SIMT=ring).
REPO=$(cd "$(dirname "$0")/../.." && pwd)
S22_SIMT=ring JK_TOTAL_S=${JK_TOTAL_S:-400} exec bash "$REPO/bench/lab/lab_call.sh" s22_simt_lab.py \
  "ring or float32 or unaligned or empty or broadcast or epilogue or handler" tests/test_matmul.py
