// Softmax / log-softmax kernels. Device code only; softmax_launch.cu picks the tier by row length.
//
// Numerics, identical in every tier (and in the CPU twin):
//   m = max over live entries (masked entries read as -inf), s = sum exp(x - m), float32 throughout;
//   softmax = exp(x - m) / s, log_softmax = (x - m) - log(s).
//   A row is "degenerate" when m is not finite (no live entry, every live entry -inf, or a +inf) or s is
//   NaN (a live NaN): then, as jax.nn computes it, every live output is NaN and every masked output is
//   0 (softmax) or -inf (log_softmax). Checking this once per row keeps the per-element path branch-free.
// The kernels by tier: softmax_common.cuh (shared numerics), softmax_warp.cuh (tier 1), softmax_block.cuh (tiers
// 2-2c), softmax_two_pass.cuh (tiers 3-4); this header includes them all.
#pragma once
// In tier order (the order they had as one file).
#include "softmax/softmax_common.cuh"
#include "softmax/softmax_warp.cuh"
#include "softmax/softmax_block.cuh"
#include "softmax/softmax_two_pass.cuh"
