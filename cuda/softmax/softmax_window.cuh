// Softmax tier kWindowRows: unmasked rows whose length is not a whole number of 16-byte packs (n % kVec != 0: the
// GPT-2 vocabulary's 50257 columns, 4099...) over 16-byte-aligned x and y. Device code only; softmax_launch.cu picks
// it.
//
// Why: such rows start at every alignment in turn, so the vectorised tiers refuse them, and the same tiers with
// kVec = 1 moved 4-byte or 2-byte elements: 0.41-0.77x jnp from 4099 columns on (H200, bench/lab/
// s32_odd_softmax_lab_h200.txt). Here each row's window, the aligned 16-byte packs that overlap it
// (common/row_window.cuh), is read with 16-byte loads in two passes: the running (max, sum) over the window, merged
// across the row's threads, then the outputs from a second read of the window (from L2 for rows in flight). Elements
// outside the row take no part and are not written: whole packs are stored with 16-byte stores, the two edge packs
// element by element. Numerics as every tier (softmax_common.cuh), degenerate rows included.
#pragma once
#include "common/row_window.cuh"
#include "softmax/softmax_common.cuh"

namespace jk::softmax {

// kWarpRow: a warp per row (CTAs of several warps, one row each); else a CTA per row.
template <typename T, bool kWarpRow>
__global__ void __launch_bounds__(kBlockRowsMaxThreads) WindowRowsKernel(const T* __restrict__ x, T* __restrict__ y,
                                                                         int64_t rows, int64_t n, bool log) {
  constexpr int P = 16 / static_cast<int>(sizeof(T));
  __shared__ float sm[32], ss[32];
  const int lanes = kWarpRow ? 32 : static_cast<int>(blockDim.x);
  const int t = kWarpRow ? static_cast<int>(threadIdx.x % 32) : static_cast<int>(threadIdx.x);
  const int64_t per_cta = kWarpRow ? blockDim.x / 32 : 1;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * per_cta + (kWarpRow ? threadIdx.x / 32 : 0);
  const int64_t step = static_cast<int64_t>(gridDim.x) * per_cta;
  const auto* xp = reinterpret_cast<const Pack<T, P>*>(x);
  // Element e of window pack q as float32, -inf outside the row.
  auto load = [&](const RowWindow<P>& w, int q, float* f) {
    const Pack<T, P> v = xp[w.first + q];
#pragma unroll
    for (int e = 0; e < P; ++e) f[e] = w.InRow(q, e) ? ToFloat(v.v[e]) : -CUDART_INF_F;
  };
  // The loop bound is uniform per warp (warp rows) or per CTA (CTA rows): the reductions are collective.
  for (int64_t row = first; row < rows; row += step) {
    const RowWindow<P> w(row, n);
    float m = -CUDART_INF_F, s = 0.f;
#pragma unroll 2
    for (int q = t; q < w.packs; q += lanes) {
      float f[P];
      load(w, q, f);
      float pm = f[0];
#pragma unroll
      for (int e = 1; e < P; ++e) pm = fmaxf(pm, f[e]);  // like fmaxf everywhere, skips a NaN: it poisons s below
      if (pm > m) {
        s *= ExpShifted(m, pm);
        m = pm;
      }
#pragma unroll
      for (int e = 0; e < P; ++e)
        if (!(f[e] == -CUDART_INF_F)) s += ExpShifted(f[e], m);  // -inf (masked-like, or outside the row) adds 0
    }
    if constexpr (kWarpRow) {
#pragma unroll
      for (int k = 16; k > 0; k /= 2)
        MergeStats(m, s, __shfl_xor_sync(0xffffffffu, m, k), __shfl_xor_sync(0xffffffffu, s, k));
    } else {
      BlockAllReduceStats(m, s, sm, ss);
    }
    const bool degenerate = Degenerate(m, s);
    const float a = log ? logf(s) : 1.f / s;
#pragma unroll 2
    for (int q = t; q < w.packs; q += lanes) {
      float f[P];
      load(w, q, f);
#pragma unroll
      for (int e = 0; e < P; ++e) f[e] = degenerate ? CUDART_NAN_F : log ? (f[e] - m) - a : ExpShifted(f[e], m) * a;
      if (w.Whole(q)) {
        StorePack<T, P>(y + (w.first + q) * P, f);
      } else {  // an edge pack, shared with a neighbouring row
#pragma unroll
        for (int e = 0; e < P; ++e)
          if (w.InRow(q, e)) y[w.start + w.Col(q, e)] = FromFloat<T>(f[e]);
      }
    }
  }
}

}  // namespace jk::softmax
