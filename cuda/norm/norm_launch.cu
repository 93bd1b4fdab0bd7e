// Tier selection and launches for LayerNorm / RMSNorm. The tiers, by row length (in 16-byte packs of
// P = 16 / sizeof(T) elements; a scalar path with P = 1 where x, y, scale or bias is misaligned or n % P
// != 0):
//   kGroupPerRowRegisters  n <= 2048: a group of 1..32 lanes per row, the row in registers
//   kBlockPerRowRegisters  packs <= 8 * 4096: a block per row (a thread-block cluster of up to 8 CTAs sharing
//                          the row through distributed shared memory for the longest rows), row in registers
//   kBlockPerRowTwoReads   anything else (and long misaligned rows): Welford pass, then a normalising pass
//   kStridedTwoReads       a non-last axis (inner > 1)
// None uses dynamic shared memory, so no launch needs a cudaFuncSetAttribute opt-in.
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <type_traits>

#include "common/launch.h"
#include "norm/norm_kernels.cuh"
#include "norm/norm_launch.h"

namespace jk {
namespace {

using norm::Kind;
using norm::Params;

constexpr int kGroupBlockThreads = 128;
// Packs per lane in the group tier: 16 packs of float32 or 8 of bf16/f16 (64 values, which the compiler
// keeps converted to float32); more spills. Rows of up to 2048 elements either way.
template <typename T>
constexpr int kGroupMaxPacksPerLane = sizeof(T) == 4 ? 16 : 8;
constexpr int kBlockMaxCluster = 8;
constexpr int kTwoReadsThreads = 512;
// Grids beyond this many blocks loop (grid-stride) instead: keeps gridDim.x far from its 2^31 - 1 limit.
constexpr int64_t kMaxBlocks = int64_t{1} << 20;

// Calls fn(std::integral_constant<int, V>) for the V in Vs equal to v.
template <int... Vs, typename Fn>
cudaError_t WithConstant(int v, Fn&& fn) {
  cudaError_t r = cudaErrorInvalidValue;
  (void)((v == Vs ? (r = fn(std::integral_constant<int, Vs>{}), true) : false) || ...);
  return r;
}

int NextPow2(int64_t v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

// Benchmarking hook (bench/lab/norm_sweep.py): JK_NORM_TIER="block C B CLUSTER" or "tworeads B" forces a
// row tier for every launch in the process. Unset in normal use; read per call so a lab script can switch
// variants between compilations.
struct Forced {
  enum { kNone, kBlock, kTwoReads } tier = kNone;
  int c = 0, b = 0, cluster = 1;
};
Forced ForcedTier() {
  Forced f;
  const char* s = std::getenv("JK_NORM_TIER");
  if (s == nullptr) return f;
  char name[16] = {0};
  int c = 0, b = 0, cl = 1;
  if (std::sscanf(s, "%15s %d %d %d", name, &c, &b, &cl) < 1) return f;
  if (std::string_view(name) == "block" && (c == 2 || c == 4 || c == 8) && b >= 32 &&
      b <= norm::kBlockMaxThreads &&
      b % 32 == 0 && (cl == 1 || cl == 2 || cl == 4 || cl == 8)) {
    f = {Forced::kBlock, c, b, cl};
  } else if (std::string_view(name) == "tworeads") {
    f = {Forced::kTwoReads, 0, c >= 32 && c <= 1024 ? c : kTwoReadsThreads, 1};
  }
  return f;
}

template <typename T>
bool Vectorizable(const Params<T>& p) {
  constexpr int P = kVec16<T>;
  return p.n % P == 0 && IsAligned(p.x, 16) && IsAligned(p.y, 16) &&
         (p.scale == nullptr || IsAligned(p.scale, 16)) && (p.bias == nullptr || IsAligned(p.bias, 16));
}

template <typename T, Kind K, int P>
cudaError_t LaunchGroupPerRow(const Params<T>& p, cudaStream_t stream, int64_t packs) {
  // Short rows: the smallest lane group covering the row (P == 1 keeps whole warps: the scalar path is
  // for correctness, not speed, and fewer instantiations).
  const int w = P == 1 ? 32 : std::min(32, NextPow2(packs));
  const int c = NextPow2(CeilDiv(packs, w));
  return WithConstant<1, 2, 4, 8, 16, 32>(w, [&](auto W) {
    constexpr int kW = decltype(W)::value;
    constexpr int kR = kW < 32 ? 2 : 1;
    if constexpr (P == 1 && kW != 32) {
      return cudaErrorInvalidValue;
    } else {
      auto launch = [&](auto C) {
        constexpr int kC = decltype(C)::value;
        const int64_t rows_per_block = kGroupBlockThreads / kW * kR;
        const int64_t blocks = std::min(CeilDiv(p.outer, rows_per_block), int64_t{NumSMs()} * 64);
        norm::GroupPerRowRegisters<T, K, P, kC, kW, kR>
            <<<static_cast<unsigned>(blocks), kGroupBlockThreads, 0, stream>>>(p);
        return LastLaunchError();
      };
      if constexpr (kW == 32 && sizeof(T) == 4) return WithConstant<1, 2, 4, 8, 16>(c, launch);
      else if constexpr (kW == 32) return WithConstant<1, 2, 4, 8>(c, launch);
      else return launch(std::integral_constant<int, 1>{});
    }
  });
}

template <typename T, Kind K, int P>
cudaError_t LaunchBlockPerRow(const Params<T>& p, cudaStream_t stream, int c, int threads, int cluster) {
  const int64_t rows = std::min(p.outer, kMaxBlocks);
  return WithConstant<2, 4, 8>(c, [&](auto C) {
    constexpr int kC = decltype(C)::value;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(static_cast<unsigned>(rows * cluster));
    cfg.blockDim = dim3(threads);
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    if (cluster > 1) {
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = cluster;
      attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = 1;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
    }
    cudaError_t e = cudaLaunchKernelEx(&cfg, norm::BlockPerRowRegisters<T, K, P, kC>, p, cluster);
    return e != cudaSuccess ? e : LastLaunchError();
  });
}

template <typename T, Kind K, int P>
cudaError_t LaunchTwoReads(const Params<T>& p, cudaStream_t stream, bool stats_only, int threads = 0) {
  const int64_t packs = p.n / P;
  if (threads == 0) threads = static_cast<int>(std::min<int64_t>(kTwoReadsThreads, CeilDiv(packs, 32) * 32));
  const int64_t blocks = std::min(p.outer, kMaxBlocks);
  norm::BlockPerRowTwoReads<T, K, P><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(p, stats_only);
  return LastLaunchError();
}

template <typename T, Kind K>
cudaError_t LaunchStrided(const Params<T>& p, cudaStream_t stream, bool stats_only) {
  const int64_t blocks = std::min(p.outer * CeilDiv(p.inner, 32), kMaxBlocks);
  norm::StridedTwoReads<T, K><<<static_cast<unsigned>(blocks), 32 * norm::kStridedSlices, 0, stream>>>(
      p, stats_only);
  return LastLaunchError();
}

// Chooses the tier for a full normalisation.
template <typename T, Kind K>
cudaError_t LaunchNormalize(const Params<T>& p, cudaStream_t stream) {
  if (p.outer == 0 || p.n == 0 || p.inner == 0) return cudaSuccess;
  if (p.inner > 1) return LaunchStrided<T, K>(p, stream, false);
  const Forced forced = ForcedTier();
  if (!Vectorizable(p)) {
    if (p.n <= 32 * kGroupMaxPacksPerLane<T>) return LaunchGroupPerRow<T, K, 1>(p, stream, p.n);
    return LaunchTwoReads<T, K, 1>(p, stream, false);
  }
  constexpr int P = kVec16<T>;
  const int64_t packs = p.n / P;
  if (forced.tier == Forced::kBlock && int64_t{forced.c} * forced.b * forced.cluster >= packs)
    return LaunchBlockPerRow<T, K, P>(p, stream, forced.c, forced.b, forced.cluster);
  if (forced.tier == Forced::kTwoReads) return LaunchTwoReads<T, K, P>(p, stream, false, forced.b);
  if (packs <= 32 * kGroupMaxPacksPerLane<T>) return LaunchGroupPerRow<T, K, P>(p, stream, packs);
  // Block per row: a CTA holds up to 4096 packs (64 KiB) with C = 8 packs per thread and 512 threads;
  // longer rows are spread over a cluster so each SM keeps several rows in flight.
  const int cluster = std::min<int64_t>(kBlockMaxCluster, NextPow2(CeilDiv(packs, 4096)));
  const int64_t per_cta = CeilDiv(packs, cluster);
  const int c = per_cta >= 2048 ? 8 : 4;
  const int64_t threads = CeilDiv(CeilDiv(per_cta, c), 32) * 32;
  if (threads <= norm::kBlockMaxThreads) return LaunchBlockPerRow<T, K, P>(p, stream, c, static_cast<int>(threads), cluster);
  return LaunchTwoReads<T, K, P>(p, stream, false);
}

// Statistics only: the two-read kernels without their second pass.
template <typename T, Kind K>
cudaError_t LaunchStatsOnly(const Params<T>& p, cudaStream_t stream) {
  if (p.outer == 0 || p.n == 0 || p.inner == 0) return cudaSuccess;
  if (p.inner > 1) return LaunchStrided<T, K>(p, stream, true);
  if (Vectorizable(p)) return LaunchTwoReads<T, K, kVec16<T>>(p, stream, true);
  return LaunchTwoReads<T, K, 1>(p, stream, true);
}

template <typename T, Kind K>
cudaError_t LaunchApply(const Params<T>& p, cudaStream_t stream) {
  const int64_t total = p.outer * p.n * p.inner;
  if (total == 0) return cudaSuccess;
  const int64_t blocks = std::min(CeilDiv(total, 256), int64_t{NumSMs()} * 32);
  norm::ApplyStats<T, K><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(p);
  return LastLaunchError();
}

template <typename T>
Params<T> MakeParams(const void* x, const void* scale, const void* bias, void* y, float* mean, float* rstd,
                     const NormShape& s, float epsilon) {
  Params<T> p;
  p.x = static_cast<const T*>(x);
  p.scale = static_cast<const T*>(scale);
  p.bias = static_cast<const T*>(bias);
  p.y = static_cast<T*>(y);
  p.mean = mean;
  p.rstd = rstd;
  p.outer = s.outer;
  p.n = s.n;
  p.inner = s.inner;
  // max(1, .): a zero-row array with groups >= 1 would divide by zero (it launches nothing anyway).
  p.scale_rows_per_group = std::max<int64_t>(1, s.outer / std::max<int64_t>(1, s.scale_groups));
  p.bias_rows_per_group = std::max<int64_t>(1, s.outer / std::max<int64_t>(1, s.bias_groups));
  p.epsilon = epsilon;
  return p;
}

enum class Mode { kNormalize, kStatsOnly, kApply };

template <Kind K, Mode M>
cudaError_t Dispatch(cudaStream_t stream, DType dtype, const void* x, const void* scale, const void* bias,
                     void* y, float* mean, float* rstd, const NormShape& shape, float epsilon) {
  return DispatchFloat<float, __nv_bfloat16, __half>(dtype, cudaErrorInvalidValue, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Params<T> p = MakeParams<T>(x, scale, bias, y, mean, rstd, shape, epsilon);
    if constexpr (M == Mode::kNormalize) return LaunchNormalize<T, K>(p, stream);
    else if constexpr (M == Mode::kStatsOnly) return LaunchStatsOnly<T, K>(p, stream);
    else return LaunchApply<T, K>(p, stream);
  });
}

}  // namespace

cudaError_t LaunchLayerNorm(cudaStream_t stream, DType dtype, const void* x, const void* scale,
                            const void* bias, void* y, float* mean, float* rstd, const NormShape& shape,
                            float epsilon) {
  return Dispatch<Kind::kLayerNorm, Mode::kNormalize>(stream, dtype, x, scale, bias, y, mean, rstd, shape,
                                                      epsilon);
}

cudaError_t LaunchRmsNorm(cudaStream_t stream, DType dtype, const void* x, const void* scale, void* y,
                          const NormShape& shape, float epsilon) {
  return Dispatch<Kind::kRmsNorm, Mode::kNormalize>(stream, dtype, x, scale, nullptr, y, nullptr, nullptr,
                                                    shape, epsilon);
}

cudaError_t LaunchLayerNormStats(cudaStream_t stream, DType dtype, const void* x, float* mean, float* m2,
                                 const NormShape& shape) {
  return Dispatch<Kind::kLayerNorm, Mode::kStatsOnly>(stream, dtype, x, nullptr, nullptr, nullptr, mean, m2,
                                                      shape, 0.f);
}

cudaError_t LaunchRmsNormStats(cudaStream_t stream, DType dtype, const void* x, float* mean_square,
                               const NormShape& shape) {
  return Dispatch<Kind::kRmsNorm, Mode::kStatsOnly>(stream, dtype, x, nullptr, nullptr, nullptr, mean_square,
                                                    nullptr, shape, 0.f);
}

cudaError_t LaunchLayerNormApply(cudaStream_t stream, DType dtype, const void* x, const float* mean,
                                 const float* rstd, const void* scale, const void* bias, void* y,
                                 const NormShape& shape) {
  return Dispatch<Kind::kLayerNorm, Mode::kApply>(stream, dtype, x, scale, bias, y, const_cast<float*>(mean),
                                                  const_cast<float*>(rstd), shape, 0.f);
}

cudaError_t LaunchRmsNormApply(cudaStream_t stream, DType dtype, const void* x, const float* rstd,
                               const void* scale, void* y, const NormShape& shape) {
  return Dispatch<Kind::kRmsNorm, Mode::kApply>(stream, dtype, x, scale, nullptr, y, nullptr,
                                                const_cast<float*>(rstd), shape, 0.f);
}

}  // namespace jk
