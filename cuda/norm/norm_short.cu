// Launches of the short-row tier (norm_short.cuh): template arguments from the row length and the
// configuration, a persistent grid of the resident capacity.
#include <algorithm>
#include <type_traits>

#include "common/launch.h"
#include "norm/norm_short.cuh"
#include "norm/norm_short.h"

namespace jk::norm {
namespace {

// The CTAs of `kernel` that fit an SM, queried once per device into `cache` (one per instantiation).
template <typename Kernel>
int ResidentCtasPerSm(Kernel kernel, int* cache) {
  constexpr int kMaxDevices = 64;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) {
    (void)cudaGetLastError();
    return 0;
  }
  if (cache[dev] == 0) {
    int v = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, kernel, kShortThreads, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    cache[dev] = v;  // benign race: every writer stores the same value
  }
  return cache[dev];
}

template <typename T, Kind K, int C, int W, int R, bool kPrefetch, bool kLean>
cudaError_t Launch(const Params<T>& p, cudaStream_t stream, int max_ctas_per_sm) {
  constexpr int P = kVec16<T>;
  auto* kernel = GroupPerRowPersistent<T, K, P, C, W, R, kPrefetch, kLean>;
  static int resident[64] = {};
  int per_sm = ResidentCtasPerSm(kernel, resident);
  if (per_sm < 1) return cudaErrorInvalidConfiguration;
  if (max_ctas_per_sm > 0) per_sm = std::min(per_sm, max_ctas_per_sm);
  const int64_t rows_per_cta = int64_t{kShortThreads / W} * R;
  const int64_t blocks = std::min<int64_t>(int64_t{NumSMs()} * per_sm, CeilDiv(p.outer, rows_per_cta));
  kernel<<<static_cast<unsigned>(blocks), kShortThreads, 0, stream>>>(p);
  return LastLaunchError();
}

template <typename T, Kind K, int C, int W, bool kLean>
cudaError_t WithRows(const Params<T>& p, cudaStream_t stream, const ShortConfig& cfg) {
  const int m = cfg.max_ctas_per_sm;
  switch (cfg.rows_per_group * 2 + (cfg.prefetch ? 1 : 0)) {
    case 2: return Launch<T, K, C, W, 1, false, kLean>(p, stream, m);
    case 3: return Launch<T, K, C, W, 1, true, kLean>(p, stream, m);
    case 4: return Launch<T, K, C, W, 2, false, kLean>(p, stream, m);
    case 5: return Launch<T, K, C, W, 2, true, kLean>(p, stream, m);
    case 8:  // 4 rows of C > 1 packs would double the registers of 2: those take 2 (lean: no R = 4)
      if constexpr (C == 1 && !kLean) return Launch<T, K, C, W, 4, false, false>(p, stream, m);
      else return Launch<T, K, C, W, 2, false, kLean>(p, stream, m);
    default: return cudaErrorInvalidValue;
  }
}

template <typename T, Kind K, int C, int W>
cudaError_t WithIndex(const Params<T>& p, cudaStream_t stream, const ShortConfig& cfg) {
  // 32-bit offsets need every element offset, and a row index one step past the end, below 2^31.
  if (cfg.lean && p.outer * p.n < (int64_t{1} << 30)) return WithRows<T, K, C, W, true>(p, stream, cfg);
  return WithRows<T, K, C, W, false>(p, stream, cfg);
}

}  // namespace

template <typename T, Kind K>
cudaError_t LaunchShortRows(const Params<T>& p, cudaStream_t stream, const ShortConfig& cfg) {
  const int64_t packs = p.n / kVec16<T>;
  if (!ShortRowsFit(packs)) return cudaErrorInvalidValue;
  if (packs <= 4) return WithIndex<T, K, 1, 4>(p, stream, cfg);
  if (packs <= 8) return WithIndex<T, K, 1, 8>(p, stream, cfg);
  if (packs <= 16) return WithIndex<T, K, 1, 16>(p, stream, cfg);
  if (packs <= 32) return WithIndex<T, K, 1, 32>(p, stream, cfg);
  if (packs <= 64) return WithIndex<T, K, 2, 32>(p, stream, cfg);
  return WithIndex<T, K, 4, 32>(p, stream, cfg);
}

template cudaError_t LaunchShortRows<float, Kind::kLayerNorm>(const Params<float>&, cudaStream_t, const ShortConfig&);
template cudaError_t LaunchShortRows<float, Kind::kRmsNorm>(const Params<float>&, cudaStream_t, const ShortConfig&);
template cudaError_t LaunchShortRows<__nv_bfloat16, Kind::kLayerNorm>(const Params<__nv_bfloat16>&, cudaStream_t,
                                                                      const ShortConfig&);
template cudaError_t LaunchShortRows<__nv_bfloat16, Kind::kRmsNorm>(const Params<__nv_bfloat16>&, cudaStream_t,
                                                                    const ShortConfig&);
template cudaError_t LaunchShortRows<__half, Kind::kLayerNorm>(const Params<__half>&, cudaStream_t, const ShortConfig&);
template cudaError_t LaunchShortRows<__half, Kind::kRmsNorm>(const Params<__half>&, cudaStream_t, const ShortConfig&);

}  // namespace jk::norm
