// Softmax / log-softmax over a non-last axis (inner > 1) with the column tile held in registers
// (common/column_tile.cuh): 16-byte packs of TX * P consecutive inner columns, R packs per thread, x read
// once: the column max, then the sum of exp(x - max) over the held values (masked-as -inf entries skipped,
// a NaN poisons the sum, as OnlineAdd), then the outputs with the numerics of every other tier (see the
// top of softmax_kernels.cuh). Unmasked only: masked calls, misaligned x/y, inner % P != 0 and columns
// too long for a cluster's registers keep ColumnsKernel (online pass + write pass).
// Included by softmax_launch.cu only.
#pragma once
#include <math_constants.h>

#include <algorithm>
#include <type_traits>

#include "common/column_tile.cuh"
#include "common/launch.h"
#include "softmax/softmax_kernels.cuh"

namespace jk::softmax {

// y for a thread's held rows r < count (at yr + r * step), given its columns' max m, a (log: log of the sum, else its
// reciprocal) and degenerate flags: the numerics of every other tier. Shared with the split tier (softmax_split.cuh).
// kStream: evict-first stores (the split tier's apply pass).
template <typename T, int R, int P, bool kStream = false>
__device__ __forceinline__ void StoreColumnRows(T* yr, int64_t step, const Pack<T, P> (&v)[R], int count,
                                                const float (&m)[P], const float (&a)[P], const bool (&degenerate)[P],
                                                bool log) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r < count) {
      float out[P];
#pragma unroll
      for (int e = 0; e < P; ++e) {
        const float t = ToFloat(v[r].v[e]) - m[e];
        out[e] = degenerate[e] ? CUDART_NAN_F : log ? t - a[e] : Exp2(t * kLog2e) * a[e];
      }
      if constexpr (kStream) {
        Pack<T, P> pk;
#pragma unroll
        for (int e = 0; e < P; ++e) pk.v[e] = FromFloat<T>(out[e]);
        tile::Store16<true>(yr + r * step, pk);
      } else {
        StorePack<T, P>(yr + r * step, out);
      }
    }
  }
}

template <typename T, int TX, int R, int kMaxThreads>
__global__ void __launch_bounds__(kMaxThreads)
    ColumnsTileRegisters(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t n, int64_t inner,
                         bool log, int cluster) {
  constexpr int P = kVec16<T>;
  __shared__ tile::Scratch<TX * P> sm;
  const int64_t ipacks = inner / P;
  const int ty = threadIdx.y, slices = blockDim.y;
  const int rank = cluster > 1 ? static_cast<int>(blockIdx.x % cluster) : 0;
  const int64_t rows_per_cta = (n + cluster - 1) / cluster;
  const int64_t j_begin = rank * rows_per_cta, j_end = std::min<int64_t>(n, j_begin + rows_per_cta);
  // One tile per CTA (per cluster), no grid-stride loop: loop-invariant 64-bit values would hold registers
  // the tile needs; the parameters stay in the constant bank.
  const int64_t cp = static_cast<int64_t>(blockIdx.x / cluster) * TX + threadIdx.x;
  const bool live = cp < outer * ipacks;
  const int64_t o = live ? cp / ipacks : 0;
  const int64_t base = o * n * inner + (live ? cp - o * ipacks : 0) * P;  // element (o, 0, i)
  // Rows j_begin + ty + r * slices for r < count.
  const int64_t first = j_begin + ty;
  const int count =
      live && first < j_end ? static_cast<int>(std::min<int64_t>(R, (j_end - first + slices - 1) / slices)) : 0;
  const T* xr = x + base + first * inner;
  const int64_t step = int64_t{slices} * inner;
  Pack<T, P> v[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r < count) v[r] = *reinterpret_cast<const Pack<T, P>*>(xr + r * step);
  }
  float m[P];
#pragma unroll
  for (int e = 0; e < P; ++e) m[e] = -CUDART_INF_F;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r < count) {
#pragma unroll
      for (int e = 0; e < P; ++e) m[e] = fmaxf(m[e], ToFloat(v[r].v[e]));  // fmaxf skips NaN: s catches it
    }
  }
  tile::ColumnAllReduce<TX, P>(m, sm, cluster, -CUDART_INF_F, MaxOp());
  // Each pass converts the held packs again: float32 copies of the whole tile would not fit.
#pragma unroll
  for (int r = 0; r < R; ++r) Opaque(v[r]);
  float s[P];
#pragma unroll
  for (int e = 0; e < P; ++e) s[e] = 0.f;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r < count) {
#pragma unroll
      for (int e = 0; e < P; ++e) {
        const float xv = ToFloat(v[r].v[e]);
        s[e] += xv == -CUDART_INF_F ? 0.f : ExpShifted(xv, m[e]);  // -inf - -inf would be NaN
      }
    }
  }
  tile::ColumnAllReduce<TX, P>(s, sm, cluster, 0.f, SumOp());
  if (!live) return;
#pragma unroll
  for (int r = 0; r < R; ++r) Opaque(v[r]);
  float a[P];
  bool degenerate[P];
#pragma unroll
  for (int e = 0; e < P; ++e) {
    degenerate[e] = Degenerate(m[e], s[e]);
    a[e] = log ? logf(s[e]) : 1.f / s[e];
  }
  T* yr = y + base + first * inner;
  int64_t out_step = step;
  tile::HideOffset(out_step);  // recomputed offsets: the loads' would stay live through the passes
  StoreColumnRows<T, R, P>(yr, out_step, v, count, m, a, degenerate, log);
}

// ---- host side --------------------------------------------------------------------------------------
template <typename T, int TX, int R, int kMaxThreads>
cudaError_t LaunchColumnsTileRegisters(cudaStream_t stream, const T* x, T* y, int64_t outer, int64_t n,
                                       int64_t inner, bool log, const tile::Geometry& g) {
  ClusterLaunch launch(dim3(static_cast<unsigned>(g.tiles * g.cluster)), dim3(TX, g.ty), stream,  // PlanTiles: < 2^31
                       g.cluster);
  const cudaError_t e = cudaLaunchKernelEx(&launch.cfg, ColumnsTileRegisters<T, TX, R, kMaxThreads>, x, y, outer, n,
                                           inner, log, g.cluster);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // consumed here, returned once
    return e;
  }
  return LastLaunchError();
}

// The register tile tier for an unmasked softmax over a non-last axis; cudaErrorNotSupported where it does
// not apply (the caller then launches ColumnsKernel).
template <typename T>
cudaError_t LaunchColumnsTile(cudaStream_t stream, const T* x, T* y, int64_t outer, int64_t n, int64_t inner,
                              bool log, bool clusters_ok) {
  constexpr int P = kVec16<T>;
  tile::Config c;
  if (!tile::ForcedConfig(c)) c = tile::DefaultConfig(n);
  if (c.legacy || inner % P != 0 || !IsAligned(x, 16) || !IsAligned(y, 16)) return cudaErrorNotSupported;
  const tile::Geometry g = tile::PlanTiles(c, outer, n, inner, P, clusters_ok);
  if (!g.ok) return cudaErrorNotSupported;
  return tile::WithTileConfig(c, [&](auto TX, auto R, auto M) {
    return LaunchColumnsTileRegisters<T, decltype(TX)::value, decltype(R)::value, decltype(M)::value>(
        stream, x, y, outer, n, inner, log, g);
  });
}

}  // namespace jk::softmax
