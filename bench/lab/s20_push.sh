#!/usr/bin/env bash
# Session 20, prepared for the next session (run as session 21's call 1), with bench/lab/s20_push.patch applied (H200):
# build (sm_90a); the decode and split-K tests (SkinnyPipe's push reduction; the wgmma split-K's exchange helpers
# moved to common/bulk_copy.cuh); then bench/lab/s20_push_lab.py. bench/lab/lab_call.sh does the work.
exec bash "$(dirname "$0")/lab_call.sh" s20_push_lab.py "skinny or pipe or splitk or split_k or decode" \
  tests/test_matmul.py tests/test_linear_epilogue.py
