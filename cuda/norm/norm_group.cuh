// LayerNorm / RMSNorm tier 1: lane groups per row, the row in registers (GroupPerRowRegisters). Device code only;
// the launcher (norm_launch.cu) picks the tier and its template parameters. Shared parts: norm_kernels.cuh.
#pragma once
#include "norm/norm_kernels.cuh"

namespace jk::norm {

// ---- tier 1: a thread group of W lanes per row, the row in registers -----------------------------
// W in {1, 2, 4, ..., 32}; each lane holds C packs of P elements per row, so rows of up to W * C * P
// elements. Short rows (W < 32) take R = 2 rows per lane so tiny rows still keep two independent loads
// in flight per lane. Loop bounds are uniform per warp (the shuffles use the full mask): rows past the
// end are computed on zeros and never stored. The packs are kept in their storage type (the compiler
// may still keep them converted to float32: the launcher caps C for bf16/f16 accordingly).
// kEarlyParams (short rows, C * R <= 2): the scale/bias packs are loaded with x, before the reductions,
// instead of after them: a short row's time is a chain of dependent latencies (load, shuffles, parameter
// load, store), and this takes one memory round trip out of it for a few registers.
// The body is shared by two kernels (GroupPerRowRegisters and GroupPerRowRegistersEarlyParams below), so
// the default one compiles exactly as before the early variant existed.
template <typename T, Kind K, int P, int C, int W, int R, bool kEarlyParams>
__device__ __forceinline__ void GroupPerRowBody(const Params<T>& p) {
  static_assert(32 % W == 0, "a thread group is a power-of-two fraction of a warp");
  constexpr int kGroupsPerWarp = 32 / W;
  const int lane = threadIdx.x % W;
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int64_t num_warps = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
  const int group_in_warp = (threadIdx.x % 32) / W;
  const int64_t rows = p.outer, n = p.n;
  const float inv_n = 1.f / static_cast<float>(n);

  for (int64_t base = warp * kGroupsPerWarp * R; base < rows; base += num_warps * kGroupsPerWarp * R) {
    Pack<T, P> v[R][C];
    Pack<T, P> g[kEarlyParams ? R : 1][kEarlyParams ? C : 1], b[kEarlyParams ? R : 1][kEarlyParams ? C : 1];
    float sum[R], shift[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t row = base + static_cast<int64_t>(group_in_warp) * R + r;
      shift[r] = RowShift<K>(p.x, row, rows, n);
      sum[r] = 0.f;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t col = (static_cast<int64_t>(c) * W + lane) * P;
        if (row < rows && col < n) {
          v[r][c] = LoadPack<T, P>(p.x + row * n + col);
          if constexpr (kEarlyParams) {
            const T* scale = ScaleRow(p, row);
            const T* bias = BiasRow(p, row);
            if (scale != nullptr) g[r][c] = LoadPack<T, P>(scale + col);
            if (K == Kind::kLayerNorm && bias != nullptr) b[r][c] = LoadPack<T, P>(bias + col);
          }
        } else {
          // Padding holds the shift (exactly representable: an element of x, or 0), so it adds nothing
          // to the sum below. That sum must stay outside the load branch: summing inside it made each
          // load wait for the one before (SASS; 16-bit LayerNorm lost ~30% of its bandwidth).
#pragma unroll
          for (int e = 0; e < P; ++e) v[r][c].v[e] = FromFloat<T>(shift[r]);
        }
#pragma unroll
        for (int e = 0; e < P; ++e) {
          const float f = ToFloat(v[r][c].v[e]);
          sum[r] += K == Kind::kLayerNorm ? f - shift[r] : f * f;
        }
      }
    }
    float mean[R], rstd[R];
#pragma unroll
    for (int r = 0; r < R; ++r) sum[r] = WarpAllReduce<W>(sum[r], SumOp());
    if constexpr (K == Kind::kLayerNorm) {
      float sq[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float shifted_mean = sum[r] * inv_n;
        mean[r] = shift[r] + shifted_mean;
        sq[r] = 0.f;
        const int64_t row = base + static_cast<int64_t>(group_in_warp) * R + r;
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const int64_t col = (static_cast<int64_t>(c) * W + lane) * P;
          if (row < rows && col < n) {  // padding must not contribute (0 - mean)^2
#pragma unroll
            for (int e = 0; e < P; ++e) {
              const float d = (ToFloat(v[r][c].v[e]) - shift[r]) - shifted_mean;
              sq[r] += d * d;
            }
          }
        }
      }
#pragma unroll
      for (int r = 0; r < R; ++r) rstd[r] = RstdFrom(WarpAllReduce<W>(sq[r], SumOp()) * inv_n, p.epsilon);
    } else {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        mean[r] = 0.f;
        rstd[r] = RstdFrom(sum[r] * inv_n, p.epsilon);
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t row = base + static_cast<int64_t>(group_in_warp) * R + r;
      if (row >= rows) continue;
      const T* scale = ScaleRow(p, row);
      const T* bias = BiasRow(p, row);
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t col = (static_cast<int64_t>(c) * W + lane) * P;
        if (col >= n) continue;
        if constexpr (kEarlyParams) {
          if (scale != nullptr) Opaque(g[r][c]);
          if (bias != nullptr) Opaque(b[r][c]);
          StorePack<T, P>(p.y + row * n + col, NormalizeWith<K, T, P>(v[r][c], mean[r], rstd[r], g[r][c], b[r][c],
                                                                      scale != nullptr, bias != nullptr));
        } else {
          StorePack<T, P>(p.y + row * n + col, NormalizePack<K, T, P>(v[r][c], mean[r], rstd[r], scale, bias, col));
        }
      }
      if (lane == 0 && p.mean != nullptr) {
        p.mean[row] = mean[r];
        p.rstd[row] = rstd[r];
      }
    }
  }
}

template <typename T, Kind K, int P, int C, int W, int R>
__global__ void __launch_bounds__(128) GroupPerRowRegisters(Params<T> p) {
  GroupPerRowBody<T, K, P, C, W, R, false>(p);
}
// The early loads may not cost occupancy: 49152 short rows are one wave of 768 CTAs only at >= 6 CTAs
// per SM (bf16 LayerNorm took 88 registers uncapped: 5 CTAs), hence the cap of 64 (8 CTAs).
template <typename T, Kind K, int P, int C, int W, int R>
__global__ void __launch_bounds__(128, 8) GroupPerRowRegistersEarlyParams(Params<T> p) {
  GroupPerRowBody<T, K, P, C, W, R, true>(p);
}

}  // namespace jk::norm
