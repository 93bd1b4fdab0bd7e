// LayerNorm / RMSNorm over a long non-last axis (inner > 1, n > kSplitMinRows): the axis split into chunks across
// CTAs, with the partial statistics in a workspace (an XLA-allocated extra result: split_axis_workspace in
// jax_kernels/_primitive.py).
//   1. SplitPartials: CTA (tile, chunk) holds chunk_rows rows of its TX column packs in registers and writes each
//      column's exact statistics of the chunk (LayerNorm: the mean of x - shift and the squared deviations from it,
//      shifted by the column's first element as in every tier; RMSNorm: the sum of squares);
//   2. SplitMerge: a warp per column combines its chunks (float32), writes (mean, rstd);
//   3. SplitApply: re-reads x (from L2 where it is still there) and writes y.
// Why: the register tile holds a column in one CTA or an 8-CTA cluster (at most 8 x 4096 rows), with 2-4 packs
// across, i.e. 32-64 byte pieces of each row, and the scalar kernel takes the rest; at 4 x 32768 x 128 they ran
// 0.52-0.82x jnp (bench/lab/strided_h200.md). Here a CTA reads up to 16 packs (256 bytes) of each row, any number
// of CTAs share a column, and the cost is a second read of x and a third small launch.
// Included by norm_launch.cu only, after norm_strided.cuh.
#pragma once
#include <algorithm>

#include "common/workspace.h"
#include "norm/norm_strided.cuh"

namespace jk::norm {

using tile::kApplyR;
using tile::kApplyThreads;
using tile::kSplitR;
using tile::kSplitThreads;

// Rows of [j_begin, j_end) that slice ty of TY holds (rows j_begin + ty, + TY, ... at most R of them).
__device__ __forceinline__ int SliceRows(int64_t rows, int ty, int TY, int R) {
  return static_cast<int>(std::clamp<int64_t>((rows - ty + TY - 1) / TY, 0, R));
}

// Each thread takes the exact statistics of its R packs (LayerNorm: the mean of x - shift over its rows and the
// squared deviations from it; RMSNorm: the sum of squares), the CTA's slices meet in shared memory, and one thread
// per column combines them in one step (mean = sum(n_t mean_t) / N, M2 = sum(M2_t + n_t (mean_t - mean)^2)): no
// shuffles, one barrier, no division per merge.
template <typename T, Kind K, int TX>
__global__ void __launch_bounds__(kSplitThreads, 2) SplitPartials(Params<T> p, float2* part, int64_t chunk_rows) {
  constexpr int P = kVec16<T>, R = kSplitR, TY = kSplitThreads / TX;
  __shared__ float2 cell[TY][P][TX];  // [slice][element][pack]: conflict-free writes and column reads
  const int64_t n = p.n, inner = p.inner, chunks = gridDim.y;
  const int64_t j_begin = blockIdx.y * chunk_rows, j_end = std::min<int64_t>(n, j_begin + chunk_rows);
  const tile::TileThread t = tile::PlaceInTile<R, P>(blockIdx.x, TX, n, inner, p.outer, j_begin, j_end);
  const int64_t step = int64_t{TY} * inner;
  Pack<T, P> v[R], head;
  LoadTileRows<T, K, R, P>(p, t, step, v, head);
  const float inv_count = t.count > 0 ? 1.f / static_cast<float>(t.count) : 0.f;
  // Rows outer, elements inner (sums of P elements in flight): element-outer loops held all 64 bf16 values as float32
  // and spilled.
  float mean[P], q[P];
#pragma unroll
  for (int e = 0; e < P; ++e) mean[e] = q[e] = 0.f;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r < t.count) {
#pragma unroll
      for (int e = 0; e < P; ++e) {
        const float d = ToFloat(v[r].v[e]) - ToFloat(head.v[e]);  // head: 0 for RMSNorm
        if (K == Kind::kLayerNorm) mean[e] += d;
        else q[e] += d * d;
      }
    }
  }
  if constexpr (K == Kind::kLayerNorm) {
    // The second pass converts the packs again: held float32 copies of 64 bf16 values spilled (as in TileSums).
#pragma unroll
    for (int r = 0; r < R; ++r) Opaque<T, P>(v[r]);
    Opaque<T, P>(head);
#pragma unroll
    for (int e = 0; e < P; ++e) mean[e] *= inv_count;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (r < t.count) {
#pragma unroll
        for (int e = 0; e < P; ++e) {
          const float d = (ToFloat(v[r].v[e]) - ToFloat(head.v[e])) - mean[e];
          q[e] += d * d;
        }
      }
    }
  }
#pragma unroll
  for (int e = 0; e < P; ++e) cell[threadIdx.y][e][threadIdx.x] = make_float2(mean[e], q[e]);
  __syncthreads();
  int e, tx;
  const int64_t stat = tile::CombineColumn<TX, P>(blockIdx.x, p.outer, inner, e, tx);  // o * inner + i
  if (stat < 0) return;
  const int64_t rows = j_end - j_begin;
  float cmean = 0.f, cq = 0.f;
  if constexpr (K == Kind::kLayerNorm) {
    for (int ty = 0; ty < TY; ++ty) cmean += static_cast<float>(SliceRows(rows, ty, TY, R)) * cell[ty][e][tx].x;
    cmean /= static_cast<float>(rows);
    for (int ty = 0; ty < TY; ++ty) {
      const float2 c = cell[ty][e][tx];
      const float d = c.x - cmean;
      cq += c.y + static_cast<float>(SliceRows(rows, ty, TY, R)) * d * d;
    }
  } else {
    for (int ty = 0; ty < TY; ++ty) cq += cell[ty][e][tx].y;
  }
  part[stat * chunks + blockIdx.y] = make_float2(cmean, cq);
}

// One warp per column (o, i): the chunks' statistics combined in one step as in SplitPartials (lanes take chunks l,
// l + 32, ...; two warp sums).
template <typename T, Kind K>
__global__ void __launch_bounds__(256) SplitMerge(Params<T> p, const float2* part, float2* stats, int64_t chunks,
                                                  int64_t chunk_rows) {
  const int64_t n = p.n, columns = p.outer * p.inner;
  const int64_t col = (int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (col >= columns) return;  // uniform per warp: blockDim.x is a multiple of 32
  const float2* pc = part + col * chunks;
  const float inv_n = 1.f / static_cast<float>(n);
  auto rows = [&](int64_t c) { return static_cast<float>(std::min<int64_t>(chunk_rows, n - c * chunk_rows)); };
  float mean = 0.f, q = 0.f;
  if constexpr (K == Kind::kLayerNorm) {
    for (int64_t c = lane; c < chunks; c += 32) mean += rows(c) * pc[c].x;
    mean = WarpAllReduce<32>(mean, SumOp()) * inv_n;  // of x - shift
    for (int64_t c = lane; c < chunks; c += 32) {
      const float2 v = pc[c];
      const float d = v.x - mean;
      q += v.y + rows(c) * d * d;
    }
  } else {
    for (int64_t c = lane; c < chunks; c += 32) q += pc[c].y;  // the chunks' sums of squares
  }
  q = WarpAllReduce<32>(q, SumOp());
  if (lane != 0) return;
  const float rstd = RstdFrom(q * inv_n, p.epsilon);
  if constexpr (K == Kind::kLayerNorm) {
    const int64_t o = col / p.inner;
    mean += ToFloat(p.x[o * n * p.inner + (col - o * p.inner)]);  // the shift: element (o, 0, i)
    if (p.mean != nullptr) {
      p.mean[col] = mean;
      p.rstd[col] = rstd;
    }
  }
  stats[col] = make_float2(mean, rstd);
}

// y from the merged statistics, CTAs of kApplyThreads with kApplyR rows a thread. The row blocks run last to first:
// SplitPartials read them first to last, so the last are the likeliest still in L2.
// kStream: x loaded and y stored evict-first (x's last read; y is not read again in the call), so the lines the
// statistics pass left in L2 stay there for the blocks still to come.
template <typename T, Kind K, int TX, bool kStream>
__global__ void __launch_bounds__(kApplyThreads, 3) SplitApply(Params<T> p, const float2* stats) {
  constexpr int P = kVec16<T>, R = kApplyR, TY = kApplyThreads / TX;
  const int64_t n = p.n, inner = p.inner;
  const int64_t j_begin = int64_t{gridDim.y - 1 - blockIdx.y} * (TY * R);
  const int64_t j_end = std::min<int64_t>(n, j_begin + TY * R);
  const tile::TileThread t = tile::PlaceInTile<R, P>(blockIdx.x, TX, n, inner, p.outer, j_begin, j_end);
  if (!t.live) return;
  const int64_t step = int64_t{TY} * inner;
  Pack<T, P> v[R], head;
  LoadTileRows<T, K, R, P, false, kStream>(p, t, step, v, head);
  const int64_t stat = t.o * inner + (t.base - t.o * n * inner);
  float mean[P], rstd[P];
#pragma unroll
  for (int e = 0; e < P; ++e) {
    const float2 s = stats[stat + e];
    mean[e] = s.x;
    rstd[e] = s.y;
  }
  StoreTileRows<T, K, R, P, kStream>(p, v, t, mean, rstd, step);
}

// ---- host side --------------------------------------------------------------------------------------

// The split tier for a full normalisation over a long non-last axis; cudaErrorNotSupported where it does not apply
// (tile::PlanSplit): the caller then takes the register tile or the scalar kernel.
template <typename T, Kind K>
cudaError_t LaunchStridedSplit(const Params<T>& p, cudaStream_t stream, const Workspace& ws) {
  const tile::SplitPlan s = tile::PlanSplit<kVec16<T>>(p.outer, p.n, p.inner, p.x, p.y, ws);
  if (!s.ok) return cudaErrorNotSupported;
  // Evict-first apply passes, measured on an H200 (bench/lab/s30_h200.md call 10, against plain ones): 16-bit
  // 1-4% faster, float32 LayerNorm 1-2% faster, float32 RMSNorm 0.5-1% slower (which keeps plain ones).
  const bool evict_first = tile::SplitStream() && !(sizeof(T) == 4 && K == Kind::kRmsNorm);
  return tile::WithSplitTx(s.tx, [&](auto tx_c) -> cudaError_t {
    constexpr int TX = decltype(tx_c)::value;
    SplitPartials<T, K, TX><<<s.Grid(), s.Block(), 0, stream>>>(p, s.part, s.chunk_rows);
    cudaError_t e = LastLaunchError();
    if (e != cudaSuccess) return e;
    SplitMerge<T, K><<<static_cast<unsigned>(s.merge_blocks), 256, 0, stream>>>(p, s.part, s.stats, s.chunks,
                                                                               s.chunk_rows);
    e = LastLaunchError();
    if (e != cudaSuccess) return e;
    if (evict_first) SplitApply<T, K, TX, true><<<s.ApplyGrid(), s.ApplyBlock(), 0, stream>>>(p, s.stats);
    else SplitApply<T, K, TX, false><<<s.ApplyGrid(), s.ApplyBlock(), 0, stream>>>(p, s.stats);
    return LastLaunchError();
  });
}

}  // namespace jk::norm
