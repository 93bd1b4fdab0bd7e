#!/usr/bin/env bash
# Session 22, call 6 (H200): the L1 prefetch of the next cooperative tile's folded bias: build, test_linear_epilogue.py
# whole (the final schedule rules, the coop256_tma variant), then s22_linear_lab.py's call-6 cases.
REPO=$(cd "$(dirname "$0")/../.." && pwd)
S22_LAB=4 JK_TOTAL_S=${JK_TOTAL_S:-560} exec bash "$REPO/bench/lab/lab_call.sh" s22_linear_lab.py "not large" \
  tests/test_linear_epilogue.py
