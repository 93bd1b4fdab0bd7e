// Short rows (LayerNorm / RMSNorm, rows of at most 32 * C packs): persistent lane groups. Device code only;
// the launcher is norm_short.cu.
//
// Why not the per-row group kernel (GroupPerRowRegisters) for these rows: at 49152 x 32 its float32
// LayerNorm instantiation took 58 registers (8 CTAs of 128 threads per SM: 1056 resident CTAs for 1536,
// so a second, mostly empty wave) and each row waits on a chain of dependent latencies: the x pack and
// a separate scalar load of x[row, 0] (the shift), two shuffle reductions, then the scale and bias packs
// (a second memory round trip) before the store. Here:
//   - the grid is the resident capacity (occupancy calculator), each group of W lanes loops over rows, so
//     there is no partial wave and no per-row block scheduling;
//   - the shift is x[row, 0] broadcast by one shuffle from the lane that already holds it (no load);
//   - with one pack per lane (C == 1), scale/bias are loaded once per thread and held (storage type, 4
//     registers per pack) while every row uses the same parameter row (the common case; a vmap over
//     scale/bias, or C > 1, loads them per row, from L1);
//   - R rows per group per step are loaded before any is reduced, and with kPrefetch the next step's rows
//     are loaded before this step's reductions, so loads stay in flight through the shuffles;
//   - 16-bit packs are re-converted in each pass (Opaque) instead of living as float32 copies.
// Statistics are as in the other tiers: two exact passes over the register-resident row, of the data
// shifted by the row's first element (see RowShift in norm_kernels.cuh).
// Measured on an H200 (bench/lab/norm_short_h200.md, 49152 rows): float32 LayerNorm 0.60x -> 0.88x jnp at
// 32 columns and 0.77x -> 0.99x at 128 with R = 2 and prefetch (the default for float32 rows of 3-32
// packs); on bf16/f16 rows (32-1024 columns) and float32 rows of 512 every configuration tied or lost
// against GroupPerRowRegisters: there the row kernels are not short of waves or loads in flight, and
// LayerNorm's extra instructions per element (16-bit: ~1.8x RMSNorm's in SASS) are the suspect. Confirmed by
// norm_short_packed.cuh (fewer instructions per element, no persistence), now the default for 16-bit rows
// of 32-256 columns; the lean variant here (kLean) gained at most ~10% (bench/lab/norm_packed_h200.md).
#pragma once
#include <type_traits>

#include "norm/norm_kernels.cuh"

namespace jk::norm {

constexpr int kShortThreads = 256;

template <typename I, typename T, int P, int C, int R>
__device__ __forceinline__ void LoadRows(Pack<T, P> (&v)[R][C], const T* x, I rows, I n, I first_row, int lane,
                                         int W) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const I row = first_row + r;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const I col = static_cast<I>(c * W + lane) * P;
      if (row < rows && col < n) {
        v[r][c] = LoadPack<T, P>(x + row * n + col);
      } else {
#pragma unroll
        for (int e = 0; e < P; ++e) v[r][c].v[e] = FromFloat<T>(0.f);
      }
    }
  }
}

template <typename T, int P, int C, int R>
__device__ __forceinline__ void OpaqueRows(Pack<T, P> (&v)[R][C]) {
  if constexpr (sizeof(T) == 2) {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int c = 0; c < C; ++c) Opaque(v[r][c]);
  }
}

// kLean (lab only, not measured yet: JK_NORM_TIER="short R F M 1"): 32-bit index arithmetic (the launcher
// takes it only where outer * n < 2^30) and, with one pack per lane, the float32 conversions kept across
// the passes instead of re-converting (no Opaque): fewer instructions per element, the suspected limit
// of 16-bit LayerNorm on short rows (SASS: ~1.8x the instructions of RMSNorm per row, mostly 64-bit
// index IMAD/ISETP and bf16 unpacking).
template <typename T, Kind K, int P, int C, int W, int R, bool kPrefetch, bool kLean = false>
__global__ void __launch_bounds__(kShortThreads) GroupPerRowPersistent(Params<T> p) {
  static_assert(32 % W == 0, "a lane group is a power-of-two fraction of a warp");
  using I = std::conditional_t<kLean, int32_t, int64_t>;
  const int lane = threadIdx.x % W;
  const I group = (static_cast<I>(blockIdx.x) * kShortThreads + static_cast<I>(threadIdx.x)) / W;
  const I step = static_cast<I>(gridDim.x) * (kShortThreads / W) * R;  // rows per step
  const I rows = static_cast<I>(p.outer), n = static_cast<I>(p.n);
  const float inv_n = 1.f / static_cast<float>(n);
  // One parameter row for every row (uniform): held in registers for the whole loop when a lane has one
  // pack per row (C > 1: 8 registers per pack of scale and bias cost more occupancy than the L1 hits of
  // reloading them per row).
  const bool hold = C == 1 && p.scale_rows_per_group >= p.outer && p.bias_rows_per_group >= p.outer;
  const bool has_scale = p.scale != nullptr, has_bias = K == Kind::kLayerNorm && p.bias != nullptr;
  Pack<T, P> g[C], b[C];
  if (hold) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const I col = static_cast<I>(c * W + lane) * P;
      if (col < n) {
        if (has_scale) g[c] = LoadPack<T, P>(p.scale + col);
        if (has_bias) b[c] = LoadPack<T, P>(p.bias + col);
      }
    }
  }

  Pack<T, P> v[R][C];
  I base = group * R;  // this group's first row of the step (uniform loop bound per warp below)
  const I warp_first = (static_cast<I>(blockIdx.x) * kShortThreads + static_cast<I>(threadIdx.x)) / 32 * 32 / W * R;
  if (kPrefetch) LoadRows<I, T, P, C, R>(v, p.x, rows, n, base, lane, W);
  for (I wbase = warp_first; wbase < rows; wbase += step, base += step) {
    if (!kPrefetch) LoadRows<I, T, P, C, R>(v, p.x, rows, n, base, lane, W);
    Pack<T, P> cur[R][C];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int c = 0; c < C; ++c) cur[r][c] = v[r][c];
    if (kPrefetch) LoadRows<I, T, P, C, R>(v, p.x, rows, n, base + step, lane, W);

    float sum[R], shift[R], mean[R], rstd[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      // x[row, 0] is element 0 of lane 0's first pack (0 for rows past the end: never stored).
      shift[r] = K == Kind::kLayerNorm ? __shfl_sync(0xffffffffu, ToFloat(cur[r][0].v[0]), 0, W) : 0.f;
      sum[r] = 0.f;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const bool valid = static_cast<I>(c * W + lane) * P < n;  // padding lanes hold zeros
#pragma unroll
        for (int e = 0; e < P; ++e) {
          const float f = ToFloat(cur[r][c].v[e]);
          if (K == Kind::kLayerNorm) sum[r] += valid ? f - shift[r] : 0.f;
          else sum[r] += f * f;
        }
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) sum[r] = WarpAllReduce<W>(sum[r], SumOp());
    constexpr bool kReconvert = !kLean || C > 1;
    if constexpr (K == Kind::kLayerNorm) {
      if constexpr (kReconvert) OpaqueRows<T, P, C, R>(cur);
      float sq[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float shifted_mean = sum[r] * inv_n;
        mean[r] = shift[r] + shifted_mean;
        sq[r] = 0.f;
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const bool valid = static_cast<I>(c * W + lane) * P < n;
#pragma unroll
          for (int e = 0; e < P; ++e) {
            const float d = (ToFloat(cur[r][c].v[e]) - shift[r]) - shifted_mean;
            sq[r] += valid ? d * d : 0.f;
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
    if constexpr (kReconvert) OpaqueRows<T, P, C, R>(cur);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const I row = base + r;
      if (row >= rows) continue;
      const T* scale = hold ? nullptr : ScaleRow(p, row);
      const T* bias = hold ? nullptr : BiasRow(p, row);
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const I col = static_cast<I>(c * W + lane) * P;
        if (col >= n) continue;
        Pack<T, P> gs = g[c], bs = b[c];
        if (!hold) {
          if (has_scale) gs = LoadPack<T, P>(scale + col);
          if (has_bias) bs = LoadPack<T, P>(bias + col);
        }
        if constexpr (sizeof(T) == 2) {
          if (has_scale) Opaque(gs);
          if (has_bias) Opaque(bs);
        }
        StorePack<T, P>(p.y + row * n + col, NormalizeWith<K, T, P>(cur[r][c], mean[r], rstd[r], gs, bs, has_scale,
                                                                      has_bias));
      }
      if (lane == 0 && p.mean != nullptr) {
        p.mean[row] = mean[r];
        p.rstd[row] = rstd[r];
      }
    }
  }
}

}  // namespace jk::norm
