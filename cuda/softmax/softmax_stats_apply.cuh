// Row-wise statistics-only and apply kernels for softmax along the last axis (inner == 1: rows
// contiguous), the per-device halves of a softmax whose axis is sharded (local (max, sum) -> pmax/psum ->
// apply). Other axes keep the strided ColumnsKernel, which for inner == 1 ran one CTA of 256 threads per
// row with 2-byte (bf16/f16) scalar accesses.
//
// A group of `width` threads per row (a sub-warp group, several rows per CTA, for short rows; up to a CTA
// for long ones), kSoftmaxRowUnroll 16-byte packs per thread in flight per step. Numerics are those of
// softmax_kernels.cuh: statistics are an online (max, sum of exp(x - max)) over chunks merged with
// MergeStats (masked entries read as -inf and skipped); apply writes NaN on live entries of Degenerate
// rows and MaskedValue on masked entries, else exp(x - m) / s or (x - m) - log(s).
// Measured on an H200, bf16 32768x4096 (bench/results/h200/stats_apply_lab.txt): stats 0.317 -> 0.091 ms
// (69% of the copy ceiling), apply 0.305 -> 0.153 ms (82%).
// Besides the kernels, a host-side launcher per entry point (called from softmax_launch.cu).
#pragma once
#include <cstdlib>
#include <cstring>

#include "common/launch.h"
#include "softmax/softmax_kernels.cuh"

namespace jk::softmax {

constexpr int kSoftmaxRowUnroll = 4;        // packs per thread per step: 64 bytes in flight per thread
constexpr int kSoftmaxRowMaxThreads = 512;  // widest CTA of the block statistics kernel
constexpr int kSoftmaxRowThreads = 256;     // CTA width of the group statistics and the apply kernels

// W lanes per row (W <= 32), 32 / W rows per warp; the row loop is warp-uniform (full-mask shuffles).
template <typename T, int kVec, int W, bool kMask>
__global__ void __launch_bounds__(kSoftmaxRowThreads)
    GroupRowStatsKernel(const T* __restrict__ x, float* __restrict__ max_out, float* __restrict__ sum_out,
                        int64_t rows, int64_t n, MaskIndex mask) {
  static_assert(32 % W == 0, "a lane group is a power-of-two fraction of a warp");
  const int lane = threadIdx.x % W;
  const int64_t thread = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t groups = int64_t(gridDim.x) * blockDim.x / W;
  for (int64_t warp_base = (thread / 32) * (32 / W); warp_base < rows; warp_base += groups) {
    const int64_t row = warp_base + (threadIdx.x % 32) / W;
    const bool live = row < rows;
    float m = -CUDART_INF_F, s = 0.f;
    if (live) {
      const int64_t moff = kMask ? mask.outer.Offset(row) : 0;
      AccumulateRow<T, kVec, kSoftmaxRowUnroll, kMask>(x + row * n, mask, moff, n, lane, W, m, s);
    }
#pragma unroll
    for (int k = W / 2; k > 0; k /= 2)
      MergeStats(m, s, __shfl_xor_sync(0xffffffffu, m, k, W), __shfl_xor_sync(0xffffffffu, s, k, W));
    if (live && lane == 0) {
      max_out[row] = m;
      sum_out[row] = s;
    }
  }
}

// A CTA per row (grid-stride) for long rows.
template <typename T, int kVec, bool kMask>
__global__ void __launch_bounds__(kSoftmaxRowMaxThreads)
    BlockRowStatsKernel(const T* __restrict__ x, float* __restrict__ max_out, float* __restrict__ sum_out,
                        int64_t rows, int64_t n, MaskIndex mask) {
  __shared__ float sm[32], ss[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t moff = kMask ? mask.outer.Offset(row) : 0;
    float m, s;
    AccumulateRow<T, kVec, kSoftmaxRowUnroll, kMask>(x + row * n, mask, moff, n, threadIdx.x, blockDim.x, m, s);
    BlockAllReduceStats(m, s, sm, ss);  // synchronises before reusing sm/ss
    if (threadIdx.x == 0) {
      max_out[row] = m;
      sum_out[row] = s;
    }
  }
}

// y from given per-row (max, sum), `width` threads per row (a power of two dividing the CTA).
template <typename T, int kVec, bool kMask>
__global__ void __launch_bounds__(kSoftmaxRowThreads)
    RowApplyKernel(const T* __restrict__ x, T* __restrict__ y, const float* __restrict__ max_in,
                   const float* __restrict__ sum_in, int64_t rows, int64_t n, MaskIndex mask, bool log,
                   int width) {
  constexpr int U = kSoftmaxRowUnroll;
  const int lane = threadIdx.x % width;
  const int64_t rows_per_cta = blockDim.x / width;
  const int64_t step = int64_t(width) * kVec;
  for (int64_t row = blockIdx.x * rows_per_cta + threadIdx.x / width; row < rows;
       row += int64_t(gridDim.x) * rows_per_cta) {
    const int64_t moff = kMask ? mask.outer.Offset(row) : 0;
    const float m = max_in[row], s = sum_in[row];
    const T* xr = x + row * n;
    T* yr = y + row * n;
    if (Degenerate(m, s)) {  // own loop, as in the one-shot tiers
      for (int64_t col = int64_t(lane) * kVec; col < n; col += step)
        StoreDegenerate<T, kVec, kMask>(yr + col, mask, moff, col, log);
      continue;
    }
    const float a = log ? logf(s) : 1.f / s;
    for (int64_t base = int64_t(lane) * kVec; base < n; base += U * step) {
      float v[U][kVec];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t col = base + u * step;
        if (col < n) LoadPack<T, kVec>(xr + col, v[u]);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t col = base + u * step;
        if (col >= n) continue;
        bool live[kVec];
#pragma unroll
        for (int k = 0; k < kVec; ++k) live[k] = true;
        if constexpr (kMask) LoadLive<kVec>(mask, moff, col, live);
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const float t = v[u][k] - m;
          // An explicit select, as ColumnsKernel: given statistics need not match x (s = inf would turn
          // exp(-inf) * (1 / s) into 0 * inf).
          v[u][k] = live[k] ? (log ? t - a : Exp2(t * kLog2e) * a) : MaskedValue(log);
        }
        StorePack<T, kVec>(yr + col, v[u]);
      }
    }
  }
}

// ---- host side ------------------------------------------------------------------------------------
// JK_STATS_APPLY_LEGACY=1 sends the stats/apply entry points back to ColumnsKernel for every axis (the
// before/after switch of bench/lab/stats_apply_lab.py). Read once per process.
inline bool LegacyStatsApply() {
  static const bool v = [] {
    const char* s = std::getenv("JK_STATS_APPLY_LEGACY");
    return s != nullptr && std::strcmp(s, "1") == 0;
  }();
  return v;
}

// Threads a row wants at kSoftmaxRowUnroll packs per thread (a power of two, <= cap).
inline int SoftmaxRowWidth(int64_t packs, int cap) {
  const int64_t want = CeilDiv(std::max<int64_t>(packs, 1), kSoftmaxRowUnroll);
  int w = 1;
  while (w < cap && w < want) w *= 2;
  return w;
}

constexpr int64_t kSoftmaxRowMaxBlocks = int64_t(1) << 20;  // grid-stride beyond this many CTAs

// Rows of up to 64 lanes' worth (two warp steps) take a lane group, longer rows a CTA of up to 512.
template <typename T, int kVec, bool kMask>
cudaError_t LaunchRowStats(cudaStream_t stream, const T* x, float* max_out, float* sum_out, int64_t rows,
                           int64_t n, const MaskIndex& mask) {
  const int64_t packs = CeilDiv(n, kVec);
  const int64_t lanes = CeilDiv(packs, kSoftmaxRowUnroll);
  if (lanes > 64) {
    const int threads = static_cast<int>(std::min<int64_t>(kSoftmaxRowMaxThreads, CeilDiv(lanes, 32) * 32));
    const int64_t blocks = std::min(rows, kSoftmaxRowMaxBlocks);
    BlockRowStatsKernel<T, kVec, kMask>
        <<<static_cast<unsigned>(blocks), threads, 0, stream>>>(x, max_out, sum_out, rows, n, mask);
    return LastLaunchError();
  }
  auto launch = [&](auto kernel, int width) {
    const int64_t blocks = std::min(CeilDiv(rows, kSoftmaxRowThreads / width), kSoftmaxRowMaxBlocks);
    kernel<<<static_cast<unsigned>(blocks), kSoftmaxRowThreads, 0, stream>>>(x, max_out, sum_out, rows, n, mask);
    return LastLaunchError();
  };
  switch (SoftmaxRowWidth(packs, 32)) {
    case 1: return launch(GroupRowStatsKernel<T, kVec, 1, kMask>, 1);
    case 2: return launch(GroupRowStatsKernel<T, kVec, 2, kMask>, 2);
    case 4: return launch(GroupRowStatsKernel<T, kVec, 4, kMask>, 4);
    case 8: return launch(GroupRowStatsKernel<T, kVec, 8, kMask>, 8);
    case 16: return launch(GroupRowStatsKernel<T, kVec, 16, kMask>, 16);
    default: return launch(GroupRowStatsKernel<T, kVec, 32, kMask>, 32);
  }
}

template <typename T, int kVec, bool kMask>
cudaError_t LaunchRowApply(cudaStream_t stream, const T* x, T* y, const float* max_in, const float* sum_in,
                           int64_t rows, int64_t n, const MaskIndex& mask, bool log) {
  const int width = SoftmaxRowWidth(CeilDiv(n, kVec), kSoftmaxRowThreads);
  const int64_t blocks = std::min(CeilDiv(rows, kSoftmaxRowThreads / width), kSoftmaxRowMaxBlocks);
  RowApplyKernel<T, kVec, kMask><<<static_cast<unsigned>(blocks), kSoftmaxRowThreads, 0, stream>>>(
      x, y, max_in, sum_in, rows, n, mask, log, width);
  return LastLaunchError();
}

}  // namespace jk::softmax
