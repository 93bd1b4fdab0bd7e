#!/usr/bin/env bash
# Session 22, call 9 (H200): SimtRing where 64x64 tiles fill at most a quarter of the SMs: build, the exact float32
# tests of test_matmul.py, then s22_simt_lab.py (S22_SIMT=ring3: blocked summation, K <= 2048 in the rule).
REPO=$(cd "$(dirname "$0")/../.." && pwd)
S22_SIMT=ring3 JK_TOTAL_S=${JK_TOTAL_S:-400} exec bash "$REPO/bench/lab/lab_call.sh" s22_simt_lab.py \
  "ring or float32 or unaligned or empty or broadcast or epilogue or handler or batched" tests/test_matmul.py
