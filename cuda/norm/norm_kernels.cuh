// LayerNorm / RMSNorm kernels. x is viewed as (outer, n, inner) around the normalised axis; the row
// kernels handle inner == 1 (rows = outer), the strided kernel inner > 1. Statistics are float32 for every
// storage type: LayerNorm uses two passes over a register-resident row (the mean, then the mean of squared
// deviations), or Welford/Chan merges where the row is streamed; never the naive sum of squares; always of
// the data shifted by the row's first element (RowShift).
// Device code only: the launcher (norm_launch.cu) picks the tier and its template parameters.
// This file: the kernels' parameters and the helpers every tier shares. The tiers: norm_group.cuh (lane groups),
// norm_block.cuh (a CTA or cluster per row, the bulk-copy tier), norm_two_reads.cuh (two reads of x, the strided
// two-read kernel, given statistics), norm_short*.cuh, norm_packed_block.cuh, norm_long.cuh, norm_cluster.cuh,
// norm_strided.cuh.
#pragma once
#include <cooperative_groups.h>

#include "common/bulk_copy.cuh"
#include "common/device.cuh"

namespace jk::norm {

enum class Kind { kLayerNorm, kRmsNorm };

// Everything a kernel needs, typed. scale/bias are (groups, n) row-major or null; row o uses scale row
// o / scale_rows_per_group (that is what keeps vmap over scale/bias a single call). mean/rstd are
// optional outputs (null: not written); in stats-only mode `mean` receives the mean (LayerNorm) or the
// mean of squares (RMSNorm) and `rstd` receives M2 = sum((x - mean)^2) (LayerNorm only).
template <typename T>
struct Params {
  const T* __restrict__ x;
  const T* __restrict__ scale;
  const T* __restrict__ bias;
  T* __restrict__ y;
  float* __restrict__ mean;
  float* __restrict__ rstd;
  int64_t outer, n, inner;
  int64_t scale_rows_per_group, bias_rows_per_group;
  float epsilon;
};

// ---- small helpers ------------------------------------------------------------------------------
template <typename T, int P>
__device__ __forceinline__ Pack<T, P> LoadPack(const T* p) {
  return *reinterpret_cast<const Pack<T, P>*>(p);
}
// Evict-first load, for the last read of data that no later kernel reads here (the two-read kernel's
// second pass). The single-read tiers use plain loads, as XLA does: at L2-resident sizes (x < 50 MB) jnp
// ran up to 2x faster than our first version, whose evict-first loads of x are one suspect (x leaves L2
// before the next call reads it).
template <typename T, int P>
__device__ __forceinline__ Pack<T, P> LoadPackStreaming(const T* p) {
  if constexpr (sizeof(Pack<T, P>) == 16) {
    int4 v = __ldcs(reinterpret_cast<const int4*>(p));
    return *reinterpret_cast<Pack<T, P>*>(&v);
  } else {
    return LoadPack<T, P>(p);
  }
}
template <typename T, int P>
__device__ __forceinline__ void StorePack(T* p, const Pack<T, P>& v) {
  *reinterpret_cast<Pack<T, P>*>(p) = v;
}

// LayerNorm statistics are taken of x - x[row, 0] ("shifted data"): a row whose mean is large against its
// spread (mean 1e4, std 0.1) would otherwise lose the mean to float32 rounding of the running sum (an error
// of about one ulp of the mean, which (x - mean) * rstd amplifies by mean / std). The subtraction is exact
// for values near the shift, so the shifted sum keeps full relative precision; the shift is added back
// once. RMSNorm needs no shift (0). `row` may be past the end (padding lanes): those get 0.
template <Kind K, typename T>
__device__ __forceinline__ float RowShift(const T* x, int64_t row, int64_t rows, int64_t n) {
  return K == Kind::kLayerNorm && row < rows ? ToFloat(x[row * n]) : 0.f;
}

// The normalisation of one element given the row statistics and the (optional) affine parameters.
template <Kind K, typename T>
__device__ __forceinline__ float Normalize(float v, float mean, float rstd, const T* scale, const T* bias,
                                           int64_t col) {
  float r = (K == Kind::kLayerNorm ? v - mean : v) * rstd;
  if (scale != nullptr) r *= ToFloat(scale[col]);
  if (K == Kind::kLayerNorm && bias != nullptr) r += ToFloat(bias[col]);
  return r;
}

// Affine rows of a given output row (null when absent). The common single-group case skips the 64-bit
// division (a few dozen instructions, paid per row: significant for short rows).
template <typename T>
__device__ __forceinline__ const T* GroupRow(const T* base, int64_t row, int64_t rows_per_group,
                                             const Params<T>& p) {
  if (base == nullptr || rows_per_group >= p.outer) return base;
  return base + (row / rows_per_group) * p.n;
}
template <typename T>
__device__ __forceinline__ const T* ScaleRow(const Params<T>& p, int64_t row) {
  return GroupRow(p.scale, row, p.scale_rows_per_group, p);
}
template <typename T>
__device__ __forceinline__ const T* BiasRow(const Params<T>& p, int64_t row) {
  return GroupRow(p.bias, row, p.bias_rows_per_group, p);
}

// A pack of outputs at column `col` (a multiple of P, so the parameter packs are aligned whenever x's
// are: the launcher checks). Loading scale/bias one pack at a time rather than one element at a time
// cuts the load instructions of LayerNorm's output pass by up to 2 * P per pack (with per-element loads,
// LayerNorm measured 10-40% below RMSNorm at the same shape; RMSNorm loads half as many parameters).
template <Kind K, typename T, int P>
__device__ __forceinline__ Pack<T, P> NormalizePack(const Pack<T, P>& v, float mean, float rstd,
                                                    const T* scale, const T* bias, int64_t col) {
  Pack<T, P> g, b, out;
  if (scale != nullptr) g = LoadPack<T, P>(scale + col);
  if (K == Kind::kLayerNorm && bias != nullptr) b = LoadPack<T, P>(bias + col);
#pragma unroll
  for (int e = 0; e < P; ++e) {
    float r = (K == Kind::kLayerNorm ? ToFloat(v.v[e]) - mean : ToFloat(v.v[e])) * rstd;
    if (scale != nullptr) r *= ToFloat(g.v[e]);
    if (K == Kind::kLayerNorm && bias != nullptr) r += ToFloat(b.v[e]);
    out.v[e] = FromFloat<T>(r);
  }
  return out;
}
// The same with parameter packs already loaded (the early-parameter and bulk-copy paths).
template <Kind K, typename T, int P>
__device__ __forceinline__ Pack<T, P> NormalizeWith(const Pack<T, P>& v, float mean, float rstd, const Pack<T, P>& g,
                                                    const Pack<T, P>& b, bool has_scale, bool has_bias) {
  Pack<T, P> out;
#pragma unroll
  for (int e = 0; e < P; ++e) {
    float r = (K == Kind::kLayerNorm ? ToFloat(v.v[e]) - mean : ToFloat(v.v[e])) * rstd;
    if (has_scale) r *= ToFloat(g.v[e]);
    if (K == Kind::kLayerNorm && has_bias) r += ToFloat(b.v[e]);
    out.v[e] = FromFloat<T>(r);
  }
  return out;
}

__device__ __forceinline__ float RstdFrom(float var, float eps) { return rsqrtf(var + eps); }

}  // namespace jk::norm
