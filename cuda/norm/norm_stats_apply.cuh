// Row-wise "statistics only" and "apply given statistics" kernels for LayerNorm / RMSNorm along the last
// axis (inner == 1: rows contiguous), the per-device halves of a normalisation whose axis is sharded
// (jax_kernels/_sharding.py: local stats -> all-reduce -> apply). inner > 1 keeps the strided kernels of
// norm_kernels.cuh.
//
// Both kernels give each row a group of `width` threads: a sub-warp group (several rows per CTA) for short
// rows, up to a whole CTA for long ones; every thread keeps kRowUnroll 16-byte packs in flight per step
// (the two-read kernel's stats-only pass, which these replace, kept one bf16 pack per thread in flight).
// Statistics stay those of the one-shot kernels: LayerNorm's of the data shifted by the row's first
// element (RowShift), exact two-pass per chunk of kRowUnroll packs merged with Chan's formula; RMSNorm a
// plain float32 sum of squares (non-negative terms, no cancellation).
// Measured on an H200 (bench/results/h200/stats_apply_lab.txt, % of the 4278 GB/s copy ceiling), replacing
// the two-read stats pass and the elementwise ApplyStats: bf16 16384x8192 LayerNorm stats 0.231 -> 0.118 ms
// (53%), apply 0.643 -> 0.145 ms (86%); RMSNorm stats 0.211 -> 0.063 ms (99%), apply 0.574 -> 0.134 (94%).
// LayerNorm stats at 8192 columns are bound by the Chan merges (an IEEE division each; every thread of
// the CTA runs the final merge over the warps), not by DRAM: RMSNorm's plain sums reach the ceiling.
// Besides the kernels, a host-side launcher per entry point (called from norm_launch.cu).
#pragma once
#include <cstdlib>
#include <cstring>

#include "common/launch.h"
#include "norm/norm_kernels.cuh"
#include "norm/norm_two_reads.cuh"  // PacksWelford

namespace jk::norm {

constexpr int kRowUnroll = 4;            // packs per thread per step: 64 bytes in flight per thread
constexpr int kRowStatsMaxThreads = 512;  // widest CTA of the block statistics kernel
constexpr int kRowApplyThreads = 256;     // CTA width of the apply kernel (one or several rows)

// This thread's share of a row: packs first, first + stride, ... in steps of kRowUnroll packs.
// LayerNorm: Welford state of x - shift; RMSNorm: the sum of squares in `m2` (count, mean unused).
template <typename T, Kind K, int P>
__device__ __forceinline__ Welford AccumulateRow(const T* x, int64_t packs, int64_t first, int64_t stride,
                                                 float shift) {
  constexpr int U = kRowUnroll;
  Welford w;
  for (int64_t base = first; base < packs; base += U * stride) {
    Pack<T, P> v[U];
    int valid = 0;  // a prefix of v, at least one
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (base + u * stride < packs) {
        v[u] = LoadPack<T, P>(x + (base + u * stride) * P);
        ++valid;
      }
    }
    float s = 0.f;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (u < valid) {
#pragma unroll
        for (int e = 0; e < P; ++e) {
          const float f = ToFloat(v[u].v[e]);
          s += K == Kind::kLayerNorm ? f - shift : f * f;
        }
      }
    }
    if constexpr (K == Kind::kRmsNorm) {
      w.m2 += s;
    } else {
      w.Merge(PacksWelford(v, valid, shift, s));
    }
  }
  return w;
}

// Stats-only outputs: LayerNorm (mean, M2), RMSNorm the mean of squares.
template <Kind K>
__device__ __forceinline__ void StoreRowStats(float* mean, float* m2, int64_t row, const Welford& w,
                                              float shift, int64_t n) {
  if constexpr (K == Kind::kLayerNorm) {
    mean[row] = shift + w.mean;
    m2[row] = w.m2;
  } else {
    mean[row] = w.m2 / static_cast<float>(n);
  }
}

// W lanes per row (W <= 32), 32 / W rows per warp. The row loop is warp-uniform (the shuffles use the full
// mask): lanes past the last row accumulate nothing and store nothing.
template <typename T, Kind K, int P, int W>
__global__ void __launch_bounds__(kRowApplyThreads) GroupRowStats(Params<T> p) {
  static_assert(32 % W == 0, "a lane group is a power-of-two fraction of a warp");
  const int lane = threadIdx.x % W;
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t groups = static_cast<int64_t>(gridDim.x) * blockDim.x / W;
  const int64_t rows = p.outer, n = p.n, packs = n / P;
  for (int64_t warp_base = (thread / 32) * (32 / W); warp_base < rows; warp_base += groups) {
    const int64_t row = warp_base + (threadIdx.x % 32) / W;
    const bool live = row < rows;
    const float shift = RowShift<K>(p.x, row, rows, n);
    Welford w;
    if (live) w = AccumulateRow<T, K, P>(p.x + row * n, packs, lane, W, shift);
    if constexpr (K == Kind::kLayerNorm) w = WarpAllReduceWelford<W>(w);
    else w.m2 = WarpAllReduce<W>(w.m2, SumOp());
    if (live && lane == 0) StoreRowStats<K>(p.mean, p.rstd, row, w, shift, n);
  }
}

// A CTA per row (grid-stride), for rows needing more than two warp steps.
template <typename T, Kind K, int P>
__global__ void __launch_bounds__(kRowStatsMaxThreads) BlockRowStats(Params<T> p) {
  __shared__ float scratch[3 * 32];
  const int64_t rows = p.outer, n = p.n, packs = n / P;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float shift = RowShift<K>(p.x, row, rows, n);
    Welford w = AccumulateRow<T, K, P>(p.x + row * n, packs, threadIdx.x, blockDim.x, shift);
    // Both reductions synchronise before touching scratch, so the next row may reuse it.
    if constexpr (K == Kind::kLayerNorm) w = BlockAllReduceWelford(w, scratch);
    else w.m2 = BlockAllReduce(w.m2, SumOp(), scratch);
    if (threadIdx.x == 0) StoreRowStats<K>(p.mean, p.rstd, row, w, shift, n);
  }
}

// y = (x - mean) * rstd * scale + bias, `width` threads per row (a power of two dividing the CTA), the
// row's statistics and parameter rows looked up once per row. No reductions: the row loop needs no
// uniformity.
// At least 3 CTAs (768 threads, 48 KB in flight) per SM: unbounded, bf16 LayerNorm took 92 registers (2
// CTAs); bounded to 4 CTAs (64 registers) it spilled.
template <typename T, Kind K, int P, int U>
__global__ void __launch_bounds__(kRowApplyThreads, 3) RowApply(Params<T> p, int width) {
  const int lane = threadIdx.x % width;
  const int64_t rows_per_cta = blockDim.x / width;
  const int64_t rows = p.outer, n = p.n, packs = n / P;
  for (int64_t row = blockIdx.x * rows_per_cta + threadIdx.x / width; row < rows;
       row += static_cast<int64_t>(gridDim.x) * rows_per_cta) {
    const float mean = K == Kind::kLayerNorm ? p.mean[row] : 0.f;
    const float rstd = p.rstd[row];
    const T* scale = ScaleRow(p, row);
    const T* bias = BiasRow(p, row);
    const T* x = p.x + row * n;
    T* y = p.y + row * n;
    for (int64_t base = lane; base < packs; base += U * width) {
      Pack<T, P> v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (base + u * width < packs) v[u] = LoadPack<T, P>(x + (base + u * width) * P);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t i = base + u * width;
        if (i < packs) StorePack<T, P>(y + i * P, NormalizePack<K, T, P>(v[u], mean, rstd, scale, bias, i * P));
      }
    }
  }
}

// ---- host side ------------------------------------------------------------------------------------
// JK_STATS_APPLY_LEGACY=1 sends the stats/apply entry points back to the kernels these replace (the
// two-read stats pass, the elementwise ApplyStats): the before/after switch of
// bench/lab/stats_apply_lab.py. Read once per process.
inline bool LegacyStatsApply() {
  static const bool v = [] {
    const char* s = std::getenv("JK_STATS_APPLY_LEGACY");
    return s != nullptr && std::strcmp(s, "1") == 0;
  }();
  return v;
}

// Lab knob (bench/lab/stats_apply_lab.py): JK_STATS_APPLY_UNROLL=2 gives the apply kernel 2 packs per
// thread per step instead of kRowUnroll (fewer registers: bf16 LayerNorm spills a little at 4).
inline int ApplyUnroll() {
  static const int v = [] {
    const char* s = std::getenv("JK_STATS_APPLY_UNROLL");
    return s != nullptr && std::strcmp(s, "2") == 0 ? 2 : kRowUnroll;
  }();
  return v;
}

// Threads a row wants at `unroll` packs per thread (a power of two, <= cap).
inline int RowWidth(int64_t packs, int cap, int unroll = kRowUnroll) {
  const int64_t want = CeilDiv(std::max<int64_t>(packs, 1), unroll);
  int w = 1;
  while (w < cap && w < want) w *= 2;
  return w;
}

constexpr int64_t kRowMaxBlocks = int64_t{1} << 20;  // grid-stride beyond this many CTAs

// Rows that need at most 32 lanes (two steps of a warp for rows of up to 64 lanes' worth) take a lane
// group, longer rows a CTA of up to 512 threads.
template <typename T, Kind K, int P>
cudaError_t LaunchRowStats(const Params<T>& p, cudaStream_t stream) {
  const int64_t packs = p.n / P;
  const int64_t lanes = CeilDiv(packs, kRowUnroll);
  if (lanes > 64) {
    const int threads = static_cast<int>(std::min<int64_t>(kRowStatsMaxThreads, CeilDiv(lanes, 32) * 32));
    const int64_t blocks = std::min(p.outer, kRowMaxBlocks);
    BlockRowStats<T, K, P><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(p);
    return LastLaunchError();
  }
  const int w = RowWidth(packs, 32);
  auto launch = [&](auto kernel, int width) {
    const int64_t rows_per_cta = kRowApplyThreads / width;
    const int64_t blocks = std::min(CeilDiv(p.outer, rows_per_cta), kRowMaxBlocks);
    kernel<<<static_cast<unsigned>(blocks), kRowApplyThreads, 0, stream>>>(p);
    return LastLaunchError();
  };
  switch (w) {
    case 1: return launch(GroupRowStats<T, K, P, 1>, 1);
    case 2: return launch(GroupRowStats<T, K, P, 2>, 2);
    case 4: return launch(GroupRowStats<T, K, P, 4>, 4);
    case 8: return launch(GroupRowStats<T, K, P, 8>, 8);
    case 16: return launch(GroupRowStats<T, K, P, 16>, 16);
    default: return launch(GroupRowStats<T, K, P, 32>, 32);
  }
}

template <typename T, Kind K, int P>
cudaError_t LaunchRowApply(const Params<T>& p, cudaStream_t stream) {
  const int unroll = ApplyUnroll();
  const int width = RowWidth(p.n / P, kRowApplyThreads, unroll);
  const int64_t rows_per_cta = kRowApplyThreads / width;
  const unsigned blocks = static_cast<unsigned>(std::min(CeilDiv(p.outer, rows_per_cta), kRowMaxBlocks));
  if (unroll == 2) {
    RowApply<T, K, P, 2><<<blocks, kRowApplyThreads, 0, stream>>>(p, width);
  } else {
    RowApply<T, K, P, kRowUnroll><<<blocks, kRowApplyThreads, 0, stream>>>(p, width);
  }
  return LastLaunchError();
}

}  // namespace jk::norm
