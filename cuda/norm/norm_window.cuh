// LayerNorm / RMSNorm tier kWindowRows: rows whose length is not a whole number of 16-byte packs (n % P != 0: 1001
// float32 columns, 4099 bf16...) over 16-byte-aligned x and y. Device code only; the launcher is norm_window.cu.
//
// Why: such rows start at every alignment in turn, so the vectorised tiers refuse them, and the scalar path took
// them through a lane group of whole warps (n <= 512 float32) or the two-read kernel's 512 threads per row, one
// element a thread at 1001 columns: 0.11-0.52x jnp at 1001 and 4099 columns (H200, bench/lab/s32_offgrid_sweep_
// h200.txt). Here a row's window, the aligned 16-byte packs that overlap it (common/row_window.cuh), is read with
// 16-byte loads: a row whose first element sits `head` elements into its first pack covers head + n elements of
// (head + n + P - 1) / P packs, and each element of the window knows its column (pack * P + e - head). Elements
// outside the row (in the first and last packs, shared with the neighbouring rows) take no part in the statistics
// and are not written: whole packs inside the row are stored with 16-byte stores, the two edge packs element by
// element. The parameters
// are read element by element (their columns are not pack-aligned in the window), from L1.
// Statistics as the other tiers: two exact passes over the register-resident row, LayerNorm's shifted by the
// row's first element.
#pragma once
#include "common/row_window.cuh"
#include "norm/norm_kernels.cuh"

namespace jk::norm {

// kWarpRow: a warp per row (CTAs of several warps, one row each); else a CTA per row. C packs per thread.
template <typename T, Kind K, int C, bool kWarpRow>
__global__ void __launch_bounds__(512) WindowRowsNorm(Params<T> p) {
  constexpr int P = 16 / static_cast<int>(sizeof(T));
  __shared__ float scratch[32];
  const int lanes = kWarpRow ? 32 : static_cast<int>(blockDim.x);
  const int t = kWarpRow ? static_cast<int>(threadIdx.x % 32) : static_cast<int>(threadIdx.x);
  const int64_t per_cta = kWarpRow ? blockDim.x / 32 : 1;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * per_cta + (kWarpRow ? threadIdx.x / 32 : 0);
  const int64_t step = static_cast<int64_t>(gridDim.x) * per_cta;
  const int64_t rows = p.outer, n = p.n;
  const float inv_n = 1.f / static_cast<float>(n);
  const auto* xp = reinterpret_cast<const Pack<T, P>*>(p.x);
  auto* yp = reinterpret_cast<Pack<T, P>*>(p.y);
  auto reduce = [&](float v) { return kWarpRow ? WarpAllReduce<32>(v, SumOp()) : BlockAllReduce(v, SumOp(), scratch); };
  // The loop bound is uniform per warp (warp rows) or per CTA (CTA rows): the reductions are collective.
  for (int64_t row = first; row < rows; row += step) {
    // Per-row quantities in 32 bits: a window holds at most 4096 packs (the launcher checks).
    const RowWindow<P> w(row, n);
    const int64_t start = w.start, w0 = w.first;
    const int packs = w.packs, cols = w.n;
    const float shift = RowShift<K>(p.x, row, rows, n);
    Pack<T, P> v[C];
#pragma unroll
    for (int k = 0; k < C; ++k) {
      const int q = k * lanes + t;
      if (q < packs) v[k] = xp[w0 + q];
    }
    // bfloat16 packs stay packed between the passes: opaque, the compiler cannot keep their float32 conversions (a
    // shift or a mask each) from one pass to the next (104-128 registers at 8 packs a thread, 75-84 with this);
    // float16 did not hoist its conversions (64-72 registers; 76-84 with this).
    auto pin = [&] {
      if constexpr (std::is_same_v<T, __nv_bfloat16>) {
#pragma unroll
        for (int k = 0; k < C; ++k) Opaque(v[k]);
      }
    };
    // Whether element e of pack k is in the row: RowWindow::InRow spelled out on local copies (through the struct
    // ptxas allocated these kernels differently, and they were measured as they are).
    auto in_row = [&](int k, int e) {
      const int q = k * lanes + t, c = w.Col(q, e);
      return q < packs && c >= 0 && c < cols;
    };
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < C; ++k)
#pragma unroll
      for (int e = 0; e < P; ++e)
        if (in_row(k, e)) {
          const float f = ToFloat(v[k].v[e]);
          s += K == Kind::kLayerNorm ? f - shift : f * f;
        }
    s = reduce(s);
    pin();
    float mean = 0.f, rstd;
    if constexpr (K == Kind::kLayerNorm) {
      const float shifted_mean = s * inv_n;
      float sq = 0.f;
#pragma unroll
      for (int k = 0; k < C; ++k)
#pragma unroll
        for (int e = 0; e < P; ++e)
          if (in_row(k, e)) {
            const float d = (ToFloat(v[k].v[e]) - shift) - shifted_mean;
            sq = fmaf(d, d, sq);
          }
      mean = shift + shifted_mean;
      rstd = RstdFrom(reduce(sq) * inv_n, p.epsilon);
    } else {
      rstd = RstdFrom(s * inv_n, p.epsilon);
    }
    const T* scale = ScaleRow(p, row);
    const T* bias = BiasRow(p, row);
    pin();
#pragma unroll
    for (int k = 0; k < C; ++k) {
      const int q = k * lanes + t, c0 = w.Col(q, 0);
      if (q >= packs) continue;
      if (c0 >= 0 && c0 + P <= cols) {  // the whole pack is in the row (RowWindow::Whole, spelled out as above)
        Pack<T, P> o;
#pragma unroll
        for (int e = 0; e < P; ++e)
          o.v[e] = FromFloat<T>(Normalize<K, T>(ToFloat(v[k].v[e]), mean, rstd, scale, bias, c0 + e));
        yp[w0 + q] = o;
      } else {  // an edge pack, shared with a neighbouring row
#pragma unroll
        for (int e = 0; e < P; ++e)
          if (c0 + e >= 0 && c0 + e < cols)
            p.y[start + c0 + e] = FromFloat<T>(Normalize<K, T>(ToFloat(v[k].v[e]), mean, rstd, scale, bias, c0 + e));
      }
    }
    if (t == 0 && p.mean != nullptr) {
      p.mean[row] = mean;
      p.rstd[row] = rstd;
    }
  }
}

}  // namespace jk::norm
