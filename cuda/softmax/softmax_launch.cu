// Softmax launchers: the one dtype dispatch, then the tier chosen by the shape.
//
// Last axis (inner == 1), by row length n:
//   kWarpRowsRegisters   n <= 1024: kWidth in {1..32} lanes per row (several rows per warp and per lane
//                        for short rows), the row in registers, shuffle reductions.
//   kBlockRowsRegisters  n <= 8192: one CTA of <= 512 threads per row at 16 elements per thread, the row
//                        in registers; one DRAM read. With JK_SOFTMAX_MAX_CLUSTER > 1 (sm_90+), rows up
//                        to 8x longer spread over a thread-block cluster of CTAs of JK_SOFTMAX_CTA_THREADS
//                        (256) that exchange the statistics through distributed shared memory.
//   kBlockRowsTwoPass    longer rows: a block per row, an online max/sum pass, then a second read
//                        (mostly from L2) that writes.
// Other axes (inner > 1), statistics-only and apply: kColumns, a strided kernel (online pass + write pass).
// 16-byte accesses when n and the pointers allow (and the mask is contiguous along the axis with aligned
// rows); the same kernels with kVec = 1 otherwise.
//
// Measured on an H200 (float32, before the block tiers' stores were vectorised for 16-bit types): CTAs of
// 128-256 threads x 16 elements ran at 4.0-4.2 TB/s (n = 2048, 4096); a 512-thread CTA (2 per SM) at 3.3
// (n = 8192); clusters of 2-8 CTAs at 2.0-2.3 (n = 8192-65536); the two-pass tier at 2.7-3.1 (n = 32768,
// 65536). Hence no clusters by default.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdlib>

#include "common/launch.h"
#include "softmax/softmax_kernels.cuh"
#include "softmax/softmax_launch.h"
#include "softmax/softmax_stats_apply.cuh"

namespace jk {
namespace {

using softmax::ColumnsMode;

constexpr int kBlockElems = 16;  // elements per thread in the block tier
constexpr int kMaxCluster = 8;   // the portable cluster size limit

// Lab knobs, read once per process: the block tier's CTA width when clustered, its largest cluster
// (1: no clusters), and the longest rows of the warp and block tiers.
int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::max(1, std::atoi(v)) : fallback;
}
int BlockThreads() {
  static const int v = std::min(softmax::kBlockRowsMaxThreads, EnvInt("JK_SOFTMAX_CTA_THREADS", 256));
  return v;
}
int ClusterLimit() {
  static const int v = std::min(kMaxCluster, EnvInt("JK_SOFTMAX_MAX_CLUSTER", 1));
  return v;
}
// Longest row of the warp-per-row tier (at most 1024: 32 lanes x 32 elements in registers).
int WarpRowsMax() {
  static const int v = std::min(1024, EnvInt("JK_SOFTMAX_WARP_MAX", 1024));
  return v;
}
// Longest row of the block tier; longer rows go to the two-pass tier (or to clusters when enabled).
int BlockRowsMax() {
  static const int v = EnvInt("JK_SOFTMAX_BLOCK_MAX", 1 << 30);
  return v;
}

// Thread-block clusters need sm_90; queried once per device (thread-safe enough: every writer stores the
// same value).
bool HasClusters() {
  constexpr int kMaxDevices = 64;
  static int cache[kMaxDevices] = {0};  // 0 unknown, 1 no, 2 yes
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return false;
  if (cache[dev] == 0) {
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) major = 0;
    cache[dev] = major >= 9 ? 2 : 1;
  }
  return cache[dev] == 2;
}

// 64-bit: the columns tier passes `inner`, which can exceed 2^30 (softmax over axis 0 of a (2, 24576, 65536)
// array); an int doubling past 2^30 overflowed to 0 and this loop never ended (a host-side hang).
int64_t NextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

template <typename T>
struct RowArgs {
  cudaStream_t stream;
  const T* x;
  T* y;
  int64_t rows, n;
  const MaskIndex* mask;
  bool log;
};

template <typename T, int kVec, int kPacks, int kWidth, bool kMask>
cudaError_t LaunchWarpRows(const RowArgs<T>& a) {
  // One pack per lane per row (rows of <= 32 packs): 4 rows per lane, for 64 bytes in flight per lane and
  // fewer, longer-lived blocks (measured 0.8x of XLA at 128 bfloat16 columns with one row per lane).
  constexpr int kRows = kPacks == 1 ? 4 : 1;
  constexpr int64_t kRowsPerBlock = (softmax::kWarpRowsBlock / kWidth) * kRows;
  const int64_t grid = std::min<int64_t>(CeilDiv(a.rows, kRowsPerBlock), int64_t(1) << 30);
  softmax::WarpRowsKernel<T, kVec, kPacks, kWidth, kRows, kMask>
      <<<static_cast<unsigned>(grid), softmax::kWarpRowsBlock, 0, a.stream>>>(
          a.x, a.y, a.rows, static_cast<int>(a.n), *a.mask, a.log);
  return LastLaunchError();
}

// Smallest per-lane pack count (and, for one pack, the smallest lane group) that holds the row.
template <typename T, int kVec, bool kMask, int kPacks = 1>
cudaError_t DispatchWarpRows(const RowArgs<T>& a) {
  if constexpr (kPacks == 1) {
    const int64_t packs = CeilDiv(a.n, kVec);
    if (packs <= 32) {
      switch (NextPow2(packs)) {
        case 1: return LaunchWarpRows<T, kVec, 1, 1, kMask>(a);
        case 2: return LaunchWarpRows<T, kVec, 1, 2, kMask>(a);
        case 4: return LaunchWarpRows<T, kVec, 1, 4, kMask>(a);
        case 8: return LaunchWarpRows<T, kVec, 1, 8, kMask>(a);
        case 16: return LaunchWarpRows<T, kVec, 1, 16, kMask>(a);
        default: return LaunchWarpRows<T, kVec, 1, 32, kMask>(a);
      }
    }
  }
  if constexpr (kPacks * kVec > 32) {
    return cudaErrorInvalidValue;  // unreachable: the caller sends n <= 1024 only
  } else {
    if (a.n <= 32 * kPacks * kVec) return LaunchWarpRows<T, kVec, kPacks, 32, kMask>(a);
    return DispatchWarpRows<T, kVec, kMask, kPacks * 2>(a);
  }
}

// CTA width and cluster size for a row of n at 16 elements per thread: one CTA of up to 512 threads
// (n <= 8192); with clusters enabled, C CTAs of up to the target width instead of CTAs wider than it.
struct BlockShape {
  int ctas = 0, threads = 0;  // ctas == 0: the row does not fit
};
BlockShape PickBlockShape(int64_t n) {
  const int64_t threads_needed = CeilDiv(n, kBlockElems);
  const int limit = HasClusters() ? ClusterLimit() : 1;
  int c = 1;
  while (c < limit && threads_needed > c * int64_t(BlockThreads())) c *= 2;
  const int64_t threads = std::max<int64_t>(32, CeilDiv(CeilDiv(threads_needed, c), 32) * 32);
  if (threads > softmax::kBlockRowsMaxThreads) return {};
  return {c, static_cast<int>(threads)};
}

template <typename T, int kVec, bool kMask>
cudaError_t LaunchBlockRows(const RowArgs<T>& a, BlockShape shape) {
  auto kernel = softmax::BlockRowsKernel<T, kVec, kBlockElems / kVec, kMask>;
  const int64_t clusters = std::min<int64_t>(a.rows, int64_t(1) << 24);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(clusters * shape.ctas));
  cfg.blockDim = dim3(shape.threads);
  cfg.stream = a.stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = shape.ctas;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = shape.ctas > 1 ? 1 : 0;
  cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, a.x, a.y, a.rows, a.n, *a.mask, a.log);
  return e != cudaSuccess ? e : LastLaunchError();
}

template <typename T, ColumnsMode kMode>
cudaError_t LaunchColumns(cudaStream_t stream, const T* x, T* y, float* max_out, float* sum_out,
                          const float* max_in, const float* sum_in, int64_t outer, int64_t n, int64_t inner,
                          const MaskIndex& mask, bool log) {
  const int bx = static_cast<int>(std::min<int64_t>(32, NextPow2(inner)));
  const dim3 block(bx, softmax::kColumnsBlock / bx);
  const int64_t tiles = outer * CeilDiv(inner, bx);
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t(1) << 30));
  if (mask.data != nullptr) {
    softmax::ColumnsKernel<T, true, kMode>
        <<<grid, block, 0, stream>>>(x, y, max_out, sum_out, max_in, sum_in, outer, n, inner, mask, log);
  } else {
    softmax::ColumnsKernel<T, false, kMode>
        <<<grid, block, 0, stream>>>(x, y, max_out, sum_out, max_in, sum_in, outer, n, inner, mask, log);
  }
  return LastLaunchError();
}

// Persistent, one or two CTAs of 512 per SM: as many rows in flight as keep their bytes under ~24 MB, so
// the second read hits L2 (measured with two per SM: 63% of the copy ceiling at 256 KB rows, 71% at 128 KB,
// consistent with the re-read missing L2 once ~34-67 MB of rows are in flight).
template <typename T, int kVec, bool kMask>
cudaError_t LaunchTwoPassRows(const RowArgs<T>& a) {
  constexpr int64_t kL2Budget = int64_t(24) << 20;
  const int64_t row_bytes = a.n * int64_t(sizeof(T));
  const int64_t per_sm = std::clamp<int64_t>(kL2Budget / (int64_t(NumSMs()) * row_bytes), 1, 2);
  const int64_t grid = std::min<int64_t>(a.rows, per_sm * NumSMs());
  softmax::TwoPassRowsKernel<T, kVec, kMask>
      <<<static_cast<unsigned>(grid), softmax::kTwoPassBlock, 0, a.stream>>>(a.x, a.y, a.rows, a.n, *a.mask, a.log);
  return LastLaunchError();
}

template <typename T, int kVec, bool kMask>
cudaError_t LaunchRows(const RowArgs<T>& a) {
  if (a.n <= WarpRowsMax()) return DispatchWarpRows<T, kVec, kMask>(a);
  const BlockShape shape = a.n <= BlockRowsMax() ? PickBlockShape(a.n) : BlockShape{};
  if (shape.ctas > 0) return LaunchBlockRows<T, kVec, kMask>(a, shape);
  return LaunchTwoPassRows<T, kVec, kMask>(a);
}

// 16-byte accesses need n to be a whole number of packs, 16-byte aligned x and y, and (with a mask) a mask
// contiguous along the axis whose row offsets and base are multiples of the pack.
template <typename T>
bool CanVectorise(const RowArgs<T>& a) {
  constexpr int kVec = kVec16<T>;
  if (a.n % kVec != 0 || !IsAligned(a.x, 16) || !IsAligned(a.y, 16)) return false;
  const MaskIndex& m = *a.mask;
  return m.data == nullptr ||
         (m.axis_stride == 1 && m.outer.StridesMultipleOf(kVec) && IsAligned(m.data, kVec));
}

template <typename T>
cudaError_t Softmax(cudaStream_t stream, const void* x, void* y, int64_t outer, int64_t n, int64_t inner,
                    const MaskIndex& mask, bool log) {
  const T* xt = static_cast<const T*>(x);
  T* yt = static_cast<T*>(y);
  if (inner != 1) {
    return LaunchColumns<T, ColumnsMode::kSoftmax>(stream, xt, yt, nullptr, nullptr, nullptr, nullptr, outer, n,
                                                   inner, mask, log);
  }
  const RowArgs<T> a{stream, xt, yt, outer, n, &mask, log};
  const bool masked = mask.data != nullptr;
  if (CanVectorise(a)) {
    return masked ? LaunchRows<T, kVec16<T>, true>(a) : LaunchRows<T, kVec16<T>, false>(a);
  }
  return masked ? LaunchRows<T, 1, true>(a) : LaunchRows<T, 1, false>(a);
}

template <typename Fn>
cudaError_t Dispatch(DType dtype, Fn&& fn) {
  return DispatchFloat<float, __nv_bfloat16, __half>(dtype, cudaErrorInvalidValue, fn);
}

}  // namespace

cudaError_t LaunchSoftmax(cudaStream_t stream, DType dtype, const void* x, void* y, int64_t outer, int64_t n,
                          int64_t inner, const MaskIndex& mask, bool log) {
  return Dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Softmax<T>(stream, x, y, outer, n, inner, mask, log);
  });
}

cudaError_t LaunchSoftmaxStats(cudaStream_t stream, DType dtype, const void* x, float* row_max, float* row_sum,
                               int64_t outer, int64_t n, int64_t inner, const MaskIndex& mask) {
  return Dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xt = static_cast<const T*>(x);
    if (inner == 1 && !softmax::LegacyStatsApply()) {
      // Rows contiguous: row-wise, 16-byte packs where allowed (softmax_stats_apply.cuh).
      const RowArgs<T> a{stream, xt, nullptr, outer, n, &mask, false};
      const bool masked = mask.data != nullptr;
      constexpr int kVec = kVec16<T>;
      if (CanVectorise(a)) {
        return masked ? softmax::LaunchRowStats<T, kVec, true>(stream, xt, row_max, row_sum, outer, n, mask)
                      : softmax::LaunchRowStats<T, kVec, false>(stream, xt, row_max, row_sum, outer, n, mask);
      }
      return masked ? softmax::LaunchRowStats<T, 1, true>(stream, xt, row_max, row_sum, outer, n, mask)
                    : softmax::LaunchRowStats<T, 1, false>(stream, xt, row_max, row_sum, outer, n, mask);
    }
    return LaunchColumns<T, ColumnsMode::kStats>(stream, xt, nullptr, row_max, row_sum, nullptr, nullptr, outer,
                                                 n, inner, mask, false);
  });
}

cudaError_t LaunchSoftmaxApply(cudaStream_t stream, DType dtype, const void* x, const float* row_max,
                               const float* row_sum, void* y, int64_t outer, int64_t n, int64_t inner,
                               const MaskIndex& mask, bool log) {
  return Dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xt = static_cast<const T*>(x);
    T* yt = static_cast<T*>(y);
    if (inner == 1 && !softmax::LegacyStatsApply()) {
      const RowArgs<T> a{stream, xt, yt, outer, n, &mask, log};
      const bool masked = mask.data != nullptr;
      constexpr int kVec = kVec16<T>;
      if (CanVectorise(a)) {
        return masked ? softmax::LaunchRowApply<T, kVec, true>(stream, xt, yt, row_max, row_sum, outer, n, mask, log)
                      : softmax::LaunchRowApply<T, kVec, false>(stream, xt, yt, row_max, row_sum, outer, n, mask, log);
      }
      return masked ? softmax::LaunchRowApply<T, 1, true>(stream, xt, yt, row_max, row_sum, outer, n, mask, log)
                    : softmax::LaunchRowApply<T, 1, false>(stream, xt, yt, row_max, row_sum, outer, n, mask, log);
    }
    return LaunchColumns<T, ColumnsMode::kApply>(stream, xt, yt, nullptr, nullptr, row_max, row_sum, outer, n,
                                                 inner, mask, log);
  });
}

}  // namespace jk
