#!/usr/bin/env bash
# Session 24, call 2 (H200): is XLA's two-kernel decode structure (split-K gemm writing float32 partials, then a
# reduction kernel) faster for us than SkinnyPipe's one-kernel cluster reduction, now that both stream swizzled
# stages? bench/lab/s23_decode.sh over session 23's lab kernels: back-to-back event times (launch gaps included),
# then one-pass Nsight Compute per kernel (gpu__time_duration alone, b stays L2-resident).
S23_VARIANTS="pipe|read528|x128w4s3k32zr8|x128w4s4k32zr8|x128w4s3k32zr4|x128w4s3k32zr16" \
  S23_CASES="8,4096,4096;4,4096,4096;8,2048,2048;8,4096,11008;8,11008,4096" \
  S23_NCU_CASES="8,4096,4096 8,2048,2048 8,4096,11008" exec bash "$(dirname "$0")/s23_decode.sh"
