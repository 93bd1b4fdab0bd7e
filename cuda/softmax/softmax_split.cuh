// Softmax / log-softmax over a long non-last axis (unmasked, inner > 1, n > tile::kSplitMinRows): the axis split into
// chunks across CTAs, as the norms' split tier (norm/norm_split.cuh, which says why), with each chunk's per-column
// (max, sum of exp(x - max)) in the workspace:
//   1. SplitPartials: CTA (tile, chunk) holds chunk_rows rows of its TX column packs in registers; each thread takes
//      its rows' max and sum, the CTA's slices meet in shared memory and one thread per column combines them;
//   2. SplitMerge: a warp per column combines the chunks: M = max m_c, S = sum s_c exp(m_c - M);
//   3. SplitApply: re-reads x (last rows first: the likeliest still in L2) and writes exp(x - M) / S (x - M - log S).
// A part whose entries are all -inf (m = -inf, s = 0) adds nothing: exp(-inf - -inf) would be NaN. A NaN poisons s
// and +inf makes the max non-finite: Degenerate, as in every tier. Included by softmax_launch.cu only.
#pragma once
#include <math_constants.h>

#include <algorithm>

#include "common/column_tile.cuh"
#include "common/launch.h"
#include "common/workspace.h"
#include "softmax/softmax_columns.cuh"
#include "softmax/softmax_kernels.cuh"

namespace jk::softmax {

using tile::kApplyR;
using tile::kApplyThreads;
using tile::kSplitR;
using tile::kSplitThreads;

// s's share of a sum over the maximum m_all (0 for a part with nothing in it).
__device__ __forceinline__ float Rescaled(float m, float s, float m_all) {
  return m == -CUDART_INF_F ? 0.f : s * ExpShifted(m, m_all);
}

// Rows r < count of a thread's tile, at x + t.base + (t.first + r * TY) * inner.
// kLastUse: evict-first loads (the apply pass: x's last read in the call).
template <typename T, int R, int P, bool kLastUse = false>
__device__ __forceinline__ void LoadRows(const T* x, const tile::TileThread& t, int64_t step, int64_t inner,
                                         Pack<T, P> (&v)[R]) {
  static_assert(sizeof(Pack<T, P>) == 16, "16-byte packs");
  const T* xr = x + t.base + t.first * inner;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r < t.count) {
      const int4* q = reinterpret_cast<const int4*>(xr + r * step);
      const int4 u = kLastUse ? __ldcs(q) : *q;
      memcpy(&v[r], &u, 16);
    }
  }
}

template <typename T, int TX>
__global__ void __launch_bounds__(kSplitThreads, 2)
    SplitPartials(const T* __restrict__ x, int64_t outer, int64_t n, int64_t inner, float2* part, int64_t chunk_rows) {
  constexpr int P = kVec16<T>, R = kSplitR, TY = kSplitThreads / TX;
  __shared__ float2 cell[TY][P][TX];  // [slice][element][pack]: conflict-free writes and column reads
  const int64_t chunks = gridDim.y;
  const int64_t j_begin = blockIdx.y * chunk_rows, j_end = std::min<int64_t>(n, j_begin + chunk_rows);
  const tile::TileThread t = tile::PlaceInTile<R, P>(blockIdx.x, TX, n, inner, outer, j_begin, j_end);
  Pack<T, P> v[R];
  LoadRows<T, R, P>(x, t, int64_t{TY} * inner, inner, v);
  float m[P], s[P];
#pragma unroll
  for (int e = 0; e < P; ++e) {
    m[e] = -CUDART_INF_F;
    s[e] = 0.f;
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r < t.count) {
#pragma unroll
      for (int e = 0; e < P; ++e) m[e] = fmaxf(m[e], ToFloat(v[r].v[e]));  // fmaxf skips NaN: s catches it
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) Opaque(v[r]);  // convert again: held float32 copies would spill
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r < t.count) {
#pragma unroll
      for (int e = 0; e < P; ++e) {
        const float xv = ToFloat(v[r].v[e]);
        s[e] += xv == -CUDART_INF_F ? 0.f : ExpShifted(xv, m[e]);
      }
    }
  }
#pragma unroll
  for (int e = 0; e < P; ++e) cell[threadIdx.y][e][threadIdx.x] = make_float2(m[e], s[e]);
  __syncthreads();
  int e, tx;
  const int64_t stat = tile::CombineColumn<TX, P>(blockIdx.x, outer, inner, e, tx);  // o * inner + i
  if (stat < 0) return;
  float cm = -CUDART_INF_F, cs = 0.f;
  for (int ty = 0; ty < TY; ++ty) cm = fmaxf(cm, cell[ty][e][tx].x);
  for (int ty = 0; ty < TY; ++ty) cs += Rescaled(cell[ty][e][tx].x, cell[ty][e][tx].y, cm);
  part[stat * chunks + blockIdx.y] = make_float2(cm, cs);
}

// One warp per column: lanes take chunks l, l + 32, ...; (max, then the rescaled sum) over the warp.
__global__ void __launch_bounds__(256) SplitMerge(int64_t columns, const float2* part, float2* stats, int64_t chunks) {
  const int64_t col = (int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (col >= columns) return;  // uniform per warp: blockDim.x is a multiple of 32
  const float2* pc = part + col * chunks;
  float m = -CUDART_INF_F, s = 0.f;
  for (int64_t c = lane; c < chunks; c += 32) m = fmaxf(m, pc[c].x);
  m = WarpAllReduce<32>(m, MaxOp());
  for (int64_t c = lane; c < chunks; c += 32) s += Rescaled(pc[c].x, pc[c].y, m);
  s = WarpAllReduce<32>(s, SumOp());
  if (lane == 0) stats[col] = make_float2(m, s);
}

// kStream: x loaded and y stored evict-first (as the norms' split apply).
template <typename T, int TX, bool kStream>
__global__ void __launch_bounds__(kApplyThreads, 3)
    SplitApply(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t n, int64_t inner,
               const float2* stats, bool log) {
  constexpr int P = kVec16<T>, R = kApplyR, TY = kApplyThreads / TX;
  const int64_t j_begin = int64_t{gridDim.y - 1 - blockIdx.y} * (TY * R);
  const int64_t j_end = std::min<int64_t>(n, j_begin + TY * R);
  const tile::TileThread t = tile::PlaceInTile<R, P>(blockIdx.x, TX, n, inner, outer, j_begin, j_end);
  if (!t.live) return;
  const int64_t step = int64_t{TY} * inner;
  Pack<T, P> v[R];
  LoadRows<T, R, P, kStream>(x, t, step, inner, v);
  const int64_t stat = t.o * inner + (t.base - t.o * n * inner);  // o * inner + i
  float m[P], a[P];
  bool degenerate[P];
#pragma unroll
  for (int e = 0; e < P; ++e) {
    const float2 st = stats[stat + e];
    m[e] = st.x;
    degenerate[e] = Degenerate(st.x, st.y);
    a[e] = log ? logf(st.y) : 1.f / st.y;
  }
  StoreColumnRows<T, R, P, kStream>(y + t.base + t.first * inner, step, v, t.count, m, a, degenerate, log);
}

// ---- host side --------------------------------------------------------------------------------------

// The split tier for an unmasked softmax over a long non-last axis; cudaErrorNotSupported where it does not apply
// (tile::PlanSplit): the caller then takes the register tile or ColumnsKernel.
template <typename T>
cudaError_t LaunchColumnsSplit(cudaStream_t stream, const T* x, T* y, int64_t outer, int64_t n, int64_t inner,
                               bool log, const Workspace& ws) {
  const tile::SplitPlan s = tile::PlanSplit<kVec16<T>>(outer, n, inner, x, y, ws);
  if (!s.ok) return cudaErrorNotSupported;
  // Evict-first apply passes for 16-bit only: measured on an H200 (bench/lab/s30_h200.md call 10, against plain
  // ones) 16-bit 1-3% faster, float32 1-3% slower.
  const bool evict_first = tile::SplitStream() && sizeof(T) == 2;
  return tile::WithSplitTx(s.tx, [&](auto tx_c) -> cudaError_t {
    constexpr int TX = decltype(tx_c)::value;
    SplitPartials<T, TX><<<s.Grid(), s.Block(), 0, stream>>>(x, outer, n, inner, s.part, s.chunk_rows);
    cudaError_t e = LastLaunchError();
    if (e != cudaSuccess) return e;
    SplitMerge<<<static_cast<unsigned>(s.merge_blocks), 256, 0, stream>>>(outer * inner, s.part, s.stats, s.chunks);
    e = LastLaunchError();
    if (e != cudaSuccess) return e;
    if (evict_first)
      SplitApply<T, TX, true><<<s.ApplyGrid(), s.ApplyBlock(), 0, stream>>>(x, y, outer, n, inner, s.stats, log);
    else
      SplitApply<T, TX, false><<<s.ApplyGrid(), s.ApplyBlock(), 0, stream>>>(x, y, outer, n, inner, s.stats, log);
    return LastLaunchError();
  });
}

}  // namespace jk::softmax
