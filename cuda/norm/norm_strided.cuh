// LayerNorm / RMSNorm over a non-last axis (inner > 1) with the column tile held in registers
// (common/column_tile.cuh): 16-byte packs of TX * P consecutive inner columns, R packs per thread, x read
// once. The statistics are exact two-pass float32 sums over the held tile (the mean of x - shift, then the
// squared deviations from it; RMSNorm: the sum of squares), shifted by each column's first element as in
// every other tier (see RowShift). The scalar two-read kernel (StridedTwoReads) stays for misaligned x/y,
// inner % P != 0, columns too long for a cluster's registers, and the statistics-only entry point.
// Included by norm_launch.cu only (the launch helpers below are host code in an anonymous-namespace-free
// header: one translation unit).
#pragma once
#include <algorithm>
#include <type_traits>

#include "common/column_tile.cuh"
#include "common/launch.h"
#include "norm/norm_kernels.cuh"

namespace jk::norm {

// The statistics of the held tile, per column: LayerNorm's mean of x - head over the rows the reductions span
// (inv_count: 1 / that many) and the sum of squared deviations from it, as two exact passes; RMSNorm's sum of
// squares (mean: 0). `cluster` CTAs share the column (1: this CTA's rows only).
template <typename T, Kind K, int TX, int R, int P>
__device__ __forceinline__ void TileSums(Pack<T, P> (&v)[R], Pack<T, P>& head, int count,
                                         tile::Scratch<TX * P>& sm, int cluster, float inv_count, float (&mean)[P],
                                         float (&q)[P]) {
  float s[P];
#pragma unroll
  for (int e = 0; e < P; ++e) s[e] = 0.f;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r < count) {
#pragma unroll
      for (int e = 0; e < P; ++e) {
        const float d = ToFloat(v[r].v[e]) - ToFloat(head.v[e]);
        s[e] += K == Kind::kLayerNorm ? d : d * d;
      }
    }
  }
  tile::ColumnAllReduce<TX, P>(s, sm, cluster, 0.f, SumOp());
  // Each pass converts the held packs again: float32 copies of the whole tile would not fit.
#pragma unroll
  for (int r = 0; r < R; ++r) Opaque<T, P>(v[r]);
  Opaque<T, P>(head);
  if constexpr (K == Kind::kLayerNorm) {
#pragma unroll
    for (int e = 0; e < P; ++e) {
      mean[e] = s[e] * inv_count;  // of x - shift
      q[e] = 0.f;
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (r < count) {
#pragma unroll
        for (int e = 0; e < P; ++e) {
          const float d = (ToFloat(v[r].v[e]) - ToFloat(head.v[e])) - mean[e];
          q[e] += d * d;
        }
      }
    }
    tile::ColumnAllReduce<TX, P>(q, sm, cluster, 0.f, SumOp());
#pragma unroll
    for (int r = 0; r < R; ++r) Opaque<T, P>(v[r]);
  } else {
#pragma unroll
    for (int e = 0; e < P; ++e) {
      mean[e] = 0.f;
      q[e] = s[e];
    }
  }
}

// y for a thread's held rows, given its columns' mean (RMSNorm: 0) and rstd.
template <typename T, Kind K, int R, int P, bool kStream = false>
__device__ __forceinline__ void StoreTileRows(const Params<T>& p, const Pack<T, P> (&v)[R], const tile::TileThread& t,
                                              const float (&mean)[P], const float (&rstd)[P], int64_t step) {
  const int slices = blockDim.y;
  const T* scale = ScaleRow(p, t.o);
  const T* bias = BiasRow(p, t.o);
  T* yr = p.y + t.base + t.first * p.inner;
  int64_t out_step = step;
  tile::HideOffset(out_step);  // recomputed offsets: the loads' would stay live through the passes
  const T* scale_r = scale != nullptr ? scale + t.first : nullptr;
  const T* bias_r = K == Kind::kLayerNorm && bias != nullptr ? bias + t.first : nullptr;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r < t.count) {
      const float g = scale_r != nullptr ? ToFloat(scale_r[r * slices]) : 1.f;
      const float b = bias_r != nullptr ? ToFloat(bias_r[r * slices]) : 0.f;
      Pack<T, P> out;
#pragma unroll
      for (int e = 0; e < P; ++e) {
        // The order of Normalize: (x - mean) * rstd, then * scale, then + bias.
        float z = (K == Kind::kLayerNorm ? ToFloat(v[r].v[e]) - mean[e] : ToFloat(v[r].v[e])) * rstd[e];
        if (scale_r != nullptr) z *= g;
        if (bias_r != nullptr) z += b;
        out.v[e] = FromFloat<T>(z);
      }
      tile::Store16<kStream>(yr + r * out_step, out);
    }
  }
}

// Loads a thread's rows of the tile, and (LayerNorm) its columns' first elements: the shift (see RowShift), held as
// a pack and converted where used. Every CTA of a column reads the same row 0, so they agree on the shift.
// kLastUse: evict-first loads (the split tier's apply pass: x's last read in the call).
template <typename T, Kind K, int R, int P, bool kHead = true, bool kLastUse = false>
__device__ __forceinline__ void LoadTileRows(const Params<T>& p, const tile::TileThread& t, int64_t step,
                                             Pack<T, P> (&v)[R], Pack<T, P>& head) {
  const T* x = p.x + t.base;
  const T* xr = x + t.first * p.inner;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r < t.count) v[r] = kLastUse ? LoadPackStreaming<T, P>(xr + r * step) : LoadPack<T, P>(xr + r * step);
  }
#pragma unroll
  for (int e = 0; e < P; ++e) head.v[e] = FromFloat<T>(0.f);
  if (kHead && K == Kind::kLayerNorm && t.live) head = LoadPack<T, P>(x);
}

template <typename T, Kind K, int TX, int R, int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads) StridedTileRegisters(Params<T> p, int cluster) {
  constexpr int P = kVec16<T>;
  __shared__ tile::Scratch<TX * P> sm;
  const int64_t n = p.n, inner = p.inner;
  const int rank = cluster > 1 ? static_cast<int>(blockIdx.x % cluster) : 0;
  const int64_t rows_per_cta = (n + cluster - 1) / cluster;
  const int64_t j_begin = rank * rows_per_cta, j_end = std::min<int64_t>(n, j_begin + rows_per_cta);
  // One tile per CTA (per cluster), no grid-stride loop: loop-invariant 64-bit values would hold registers
  // the tile needs (ptxas spilled); the parameters stay in the constant bank.
  const tile::TileThread t = tile::PlaceInTile<R, P>(blockIdx.x / cluster, TX, n, inner, p.outer, j_begin, j_end);
  const int64_t step = int64_t{blockDim.y} * inner;
  Pack<T, P> v[R], head;
  LoadTileRows<T, K, R, P>(p, t, step, v, head);
  const float inv_n = 1.f / static_cast<float>(n);
  float mean[P], q[P], rstd[P];
  TileSums<T, K, TX, R, P>(v, head, t.count, sm, cluster, inv_n, mean, q);
#pragma unroll
  for (int e = 0; e < P; ++e) {
    rstd[e] = RstdFrom(q[e] * inv_n, p.epsilon);
    if (K == Kind::kLayerNorm) mean[e] += ToFloat(head.v[e]);
  }
  if (!t.live) return;
  if (K == Kind::kLayerNorm && p.mean != nullptr && threadIdx.y == 0 && rank == 0) {
    const int64_t stat = t.o * inner + (t.base - t.o * n * inner);  // o * inner + i
#pragma unroll
    for (int e = 0; e < P; ++e) {
      p.mean[stat + e] = mean[e];
      p.rstd[stat + e] = rstd[e];
    }
  }
  StoreTileRows<T, K, R, P>(p, v, t, mean, rstd, step);
}

// ---- host side --------------------------------------------------------------------------------------

template <typename T, Kind K, int TX, int R, int kMaxThreads>
cudaError_t LaunchTileRegisters(const Params<T>& p, cudaStream_t stream, const tile::Geometry& g) {
  ClusterLaunch launch(dim3(static_cast<unsigned>(g.tiles * g.cluster)), dim3(TX, g.ty), stream,  // PlanTiles: < 2^31
                       g.cluster);
  const cudaError_t e = cudaLaunchKernelEx(&launch.cfg, StridedTileRegisters<T, K, TX, R, kMaxThreads>, p, g.cluster);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // consumed here, returned once
    return e;
  }
  return LastLaunchError();
}

// The register tile tier for a full normalisation over a non-last axis; cudaErrorNotSupported where it does
// not apply (the caller then launches StridedTwoReads).
template <typename T, Kind K>
cudaError_t LaunchStridedTile(const Params<T>& p, cudaStream_t stream, bool clusters_ok) {
  constexpr int P = kVec16<T>;
  tile::Config c;
  if (!tile::ForcedConfig(c)) c = tile::DefaultConfig(p.n);
  if (c.legacy || p.inner % P != 0 || !IsAligned(p.x, 16) || !IsAligned(p.y, 16)) return cudaErrorNotSupported;
  const tile::Geometry g = tile::PlanTiles(c, p.outer, p.n, p.inner, P, clusters_ok);
  if (!g.ok) return cudaErrorNotSupported;
  return tile::WithTileConfig(c, [&](auto TX, auto R, auto M) {
    return LaunchTileRegisters<T, K, decltype(TX)::value, decltype(R)::value, decltype(M)::value>(p, stream, g);
  });
}

}  // namespace jk::norm
