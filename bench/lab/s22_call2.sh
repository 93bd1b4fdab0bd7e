#!/usr/bin/env bash
# Session 22, call 2 (H200): bench/lab/s21_coop128_short_k.patch alone (the merged epilogue of call 1 reverted):
# build, test_linear_epilogue.py whole and test_matmul.py's wgmma cases, then s22_linear_lab.py's call-2 cases.
REPO=$(cd "$(dirname "$0")/../.." && pwd)
S22_LAB=2 JK_TOTAL_S=${JK_TOTAL_S:-560} exec bash "$REPO/bench/lab/lab_call.sh" s22_linear_lab.py "not large" \
  tests/test_linear_epilogue.py
