// The norms' cluster tier: shape rule and launch (kernel in norm_cluster.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "common/launch.h"
#include "norm/norm_cluster.cuh"
#include "norm/norm_cluster.h"

namespace jk::norm {

namespace {
constexpr int kThreads = 512;
constexpr int kMaxCluster = 8;  // the portable cluster size limit

// Elements per thread: 32 float32 (8 packs as floats) or 64 16-bit (8 packs as raw words); both keep a
// CTA of 512 threads under 64 registers, two per SM. The default takes LayerNorm rows of float32 n >= 16384
// and of 16-bit n > 32768 (past the packed block tier); clusters of up to 8 on an occupancy-sized persistent
// grid, and at float32 16384 (one CTA, no cluster) a CTA per row. H200 (bench/lab/s8_h200.md), against the
// tiers before (two reads):
//   float32 16384  85% -> 97% of the copy ceiling     float32 32768  67% -> 75%
//   float32 65536  58% -> 71%                         16-bit 65536   64% -> 72%
// RMSNorm lost (float32 32768 82% -> 66%, 65536 69% -> 59%; 16-bit 65536 a tie): its instantiations keep
// 32-80 bytes of stack the LayerNorm ones do not (not analysed), so it keeps its tiers.
// Lab knob JK_NORM_CLUSTER = "F R [S [P]]": rows longer than F columns (F = 0: the default's; RMSNorm
// included), R resident clusters (-1: as many as the occupancy calculator says fit, 0: one cluster per row,
// R > 0: R CTAs per SM), S = 1 (default) staged / 0 not (ClusterRowsNorm's kStage), P = 4 (default) or 8
// packs per thread (staged only; unstaged: 8); "off": none.
struct Shape {
  int ctas = 0, resident = -1;  // ctas == 0: not this tier
  bool stage = true;            // the next row and the parameters staged in shared memory
  int packs = 4;                // 16-byte packs per thread: 4 or 8
};
template <typename T, Kind K>
Shape Choose(int64_t n) {
  int64_t from = sizeof(T) == 4 ? 16383 : 32768;  // rows longer than this
  int resident = -2;                              // -2: the default's grid (see above)
  Shape shape;
  if (const char* env = std::getenv("JK_NORM_CLUSTER")) {
    int f = 0, r = -1, st = 1, pk = 4;
    if (std::sscanf(env, "%d %d %d %d", &f, &r, &st, &pk) < 2 || !(pk == 4 || pk == 8)) return {};
    if (f > 0) from = f;
    resident = r;
    shape.stage = st != 0;
    shape.packs = pk;
  } else if (K == Kind::kRmsNorm) {
    return {};
  } else if (sizeof(T) == 4 && n <= 16384) {
    shape.stage = false;  // one CTA per row: nothing to prefetch
  }
  if (!shape.stage) shape.packs = 8;  // the unstaged kernel is compiled at 8 packs only
  if (n <= from) return {};
  auto cluster_for = [&](int packs) {  // the fewest CTAs (a power of two) that hold the row, 0: too long
    const int64_t elems = int64_t(packs) * (16 / sizeof(T));
    int c = 1;
    while (c < kMaxCluster && n > int64_t(c) * kThreads * elems) c *= 2;
    return n > int64_t(c) * kThreads * elems ? 0 : c;
  };
  int c = cluster_for(shape.packs);
  if (c == 0 && std::getenv("JK_NORM_CLUSTER") == nullptr && shape.packs == 4) {
    shape.stage = false;  // past 8 CTAs of 4 packs: unstaged at 8 packs (twice as long rows)
    shape.packs = 8;
    c = cluster_for(8);
  }
  if (c == 0) return {};
  if (resident == -2) resident = c == 1 ? 0 : -1;
  shape.ctas = c;
  shape.resident = resident;
  return shape;
}

template <typename T, Kind K, int kPacks, bool kStage>
cudaError_t LaunchShape(const Params<T>& p, cudaStream_t stream, const Shape& shape) {
  constexpr int kP = 16 / sizeof(T);
  constexpr auto kKernel = ClusterRowsNorm<T, K, kPacks, kStage>;
  // Threads: the row's packs over the cluster, rounded up to whole warps (ranks own contiguous slices of
  // kPacks * threads packs; the last rank's may be partly padding).
  const int64_t packs = p.n / kP;
  const int threads =
      static_cast<int>(std::min<int64_t>(kThreads, CeilDiv(CeilDiv(packs, int64_t(kPacks) * shape.ctas), 32) * 32));
  // Staged: the slice of x, plus those of scale and bias where one group serves every row (the kernel's
  // params_staged), each threads * kPacks * 16 bytes.
  int slices = 0;
  if (kStage) {
    const bool one_group = (p.scale == nullptr || p.scale_rows_per_group >= p.outer) &&
                           (K == Kind::kRmsNorm || p.bias == nullptr || p.bias_rows_per_group >= p.outer);
    slices = 1 + (one_group && p.scale != nullptr) + (one_group && K == Kind::kLayerNorm && p.bias != nullptr);
  }
  const int smem = slices * threads * kPacks * 16;
  cudaError_t e = kStage ? AllowDynamicSmem<kKernel>(3 * kThreads * kPacks * 16) : cudaSuccess;
  if (e != cudaSuccess) return e;
  int64_t clusters = 0;
  e = ClusterGrid(reinterpret_cast<const void*>(kKernel), shape.ctas, threads, p.outer, shape.resident, &clusters,
                  smem);
  if (e != cudaSuccess) return e;
  ClusterLaunch launch(dim3(static_cast<unsigned>(clusters * shape.ctas)), dim3(threads), stream, shape.ctas, smem);
  e = cudaLaunchKernelEx(&launch.cfg, kKernel, p);
  return e != cudaSuccess ? e : LastLaunchError();
}
}  // namespace

template <typename T, Kind K>
cudaError_t LaunchClusterRows(const Params<T>& p, cudaStream_t stream) {
  if (p.inner != 1 || !RunsSm90Code()) return cudaErrorNotSupported;
  const Shape shape = Choose<T, K>(p.n);
  if (shape.ctas == 0) return cudaErrorNotSupported;
  if (!shape.stage) return LaunchShape<T, K, 8, false>(p, stream, shape);
  if (shape.packs == 8) return LaunchShape<T, K, 8, true>(p, stream, shape);
  return LaunchShape<T, K, 4, true>(p, stream, shape);
}

template cudaError_t LaunchClusterRows<float, Kind::kLayerNorm>(const Params<float>&, cudaStream_t);
template cudaError_t LaunchClusterRows<float, Kind::kRmsNorm>(const Params<float>&, cudaStream_t);
template cudaError_t LaunchClusterRows<__nv_bfloat16, Kind::kLayerNorm>(const Params<__nv_bfloat16>&, cudaStream_t);
template cudaError_t LaunchClusterRows<__nv_bfloat16, Kind::kRmsNorm>(const Params<__nv_bfloat16>&, cudaStream_t);
template cudaError_t LaunchClusterRows<__half, Kind::kLayerNorm>(const Params<__half>&, cudaStream_t);
template cudaError_t LaunchClusterRows<__half, Kind::kRmsNorm>(const Params<__half>&, cudaStream_t);

}  // namespace jk::norm
