// Host-side launch helpers shared by the launchers (.cu files). Plain C++ plus the CUDA runtime API.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace jk {

// A device attribute of the current device, queried once per device (a failed query returns `fallback`
// and is retried next time). A host-side query: safe during CUDA-graph capture.
template <cudaDeviceAttr kAttr>
int CachedDeviceAttribute(int fallback) {
  constexpr int kMaxDevices = 64;
  static int cache[kMaxDevices] = {0};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return fallback;
  int v = cache[dev];  // benign race: every writer stores the same value
  if (v == 0) {
    if (cudaDeviceGetAttribute(&v, kAttr, dev) != cudaSuccess) return fallback;
    cache[dev] = v;
  }
  return v;
}

// CTAs of `kernel` at `threads` threads (no dynamic shared memory) that fit an SM on the current device, from the
// occupancy calculator, queried once per device into `cache` (kOccupancyCacheDevices zero-initialised entries: one
// cache per kernel and block size). 0 where a query fails (the error cleared; retried next time).
inline constexpr int kOccupancyCacheDevices = 64;
inline int CachedCtasPerSm(const void* kernel, int threads, int* cache) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kOccupancyCacheDevices) {
    (void)cudaGetLastError();
    return 0;
  }
  if (cache[dev] == 0) {
    int v = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, kernel, threads, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    cache[dev] = v;  // benign race: every writer stores the same value
  }
  return cache[dev];
}

// Multiprocessor count of the current device (132 if the query fails): launchers size persistent grids
// from it.
inline int NumSMs() { return CachedDeviceAttribute<cudaDevAttrMultiProcessorCount>(132); }

// Compute capability major of the current device (0 if the query fails): sm_90 features (clusters, bulk
// copies, wgmma) are chosen from it.
inline int ComputeMajor() { return CachedDeviceAttribute<cudaDevAttrComputeCapabilityMajor>(0); }

// Whether the current device runs this build's sm_90 code (bulk copies, mbarriers, clusters): a compute
// capability 9.x device that picked binaries built for compute_90 or later (common/sm90.cu). A device
// running a JIT of the compute_80 PTX instead (a newer GPU than the sm_90a binaries serve, or a build
// without them) gets that code compiled to nothing, so the tiers that need it must not launch there.
bool RunsSm90Code();

// A launch configuration with clusters of `cluster` CTAs along x (no cluster attribute when 1). Not copyable:
// cfg points at its own attribute.
struct ClusterLaunch {
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr[1];
  ClusterLaunch(dim3 grid, dim3 block, cudaStream_t stream, int cluster) {
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.stream = stream;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = cluster > 1 ? 1 : 0;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A lab on/off knob, read at every launch (so one process can time both settings with XLA command buffers off):
// unset -> `by_default`, else whether its value (atoi) is nonzero. The norms' cluster and window tiers, softmax's
// window tier.
inline bool KnobOr(const char* name, bool by_default) {
  const char* e = std::getenv(name);
  return e != nullptr ? std::atoi(e) != 0 : by_default;
}

// The cluster tiers' shape rule: rows of `units` (packs or elements) spread over CTAs of at most `max_threads`
// threads x `per_thread` units each take the smallest power-of-two cluster of at most `max_cluster` CTAs that
// holds a row (ctas 0: none does), and each CTA the row's share of threads rounded up to whole warps.
struct RowSpan {
  int ctas = 0, threads = 0;
};
inline RowSpan RowSpanFor(int64_t units, int64_t per_thread, int max_threads, int max_cluster) {
  int c = 1;
  while (c < max_cluster && units > int64_t(c) * max_threads * per_thread) c *= 2;
  if (units > int64_t(c) * max_threads * per_thread) return {};
  const int64_t threads = CeilDiv(CeilDiv(units, per_thread * c), 32) * 32;
  return {c, static_cast<int>(std::min<int64_t>(max_threads, threads))};
}

// Clusters of `ctas` CTAs of `threads` threads (`smem` bytes of dynamic shared memory each) in a grid over `rows`
// row tasks:
// one per row (resident == 0, capped at 2^24), `resident` CTAs per SM (resident > 0), or (resident < 0) as
// many as the occupancy calculator says can be resident at once (clusters of 1: blocks per SM x SMs). The
// softmax and norm cluster tiers size their persistent grids with it.
inline cudaError_t ClusterGrid(const void* kernel, int ctas, int threads, int64_t rows, int resident,
                               int64_t* clusters, size_t smem = 0) {
  *clusters = std::min<int64_t>(rows, int64_t(1) << 24);
  if (resident > 0) {
    *clusters = std::min<int64_t>(*clusters, std::max<int64_t>(1, int64_t(resident) * NumSMs() / ctas));
  } else if (resident < 0) {
    int fit = 0;
    if (ctas > 1) {
      ClusterLaunch probe(dim3(static_cast<unsigned>(ctas)), dim3(threads), nullptr, ctas);
      probe.cfg.dynamicSmemBytes = smem;
      const cudaError_t e = cudaOccupancyMaxActiveClusters(&fit, kernel, &probe.cfg);
      if (e != cudaSuccess) return e;
    } else {
      const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, threads, smem);
      if (e != cudaSuccess) return e;
      fit *= NumSMs();
    }
    *clusters = std::min<int64_t>(*clusters, std::max(fit, 1));
  }
  return cudaSuccess;
}

// After a launch: the launch's own error, if any. cudaGetLastError can also return an error left by
// earlier asynchronous work; the caller's message names the op that noticed it.
inline cudaError_t LastLaunchError() { return cudaGetLastError(); }

#ifdef __CUDACC__
// Launches `kernel` on clusters of `ctas` CTAs of `threads` threads over `rows` row tasks, the grid sized by
// ClusterGrid's `resident` rule (-1: as many clusters as fit at once, the persistent grids of the cluster and
// hybrid row tiers of softmax_launch.cu and norm_cluster.cu), with `smem` bytes of dynamic shared memory per CTA
// (opted in past the 48 KB default when there are any).
template <typename... Params, typename... Args>
cudaError_t LaunchClusterGrid(void (*kernel)(Params...), int ctas, int threads, size_t smem, int64_t rows, int resident,
                              cudaStream_t stream, Args... args) {
  cudaError_t e = cudaSuccess;
  if (smem > 0) e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (e != cudaSuccess) return e;
  int64_t clusters = 0;
  e = ClusterGrid(reinterpret_cast<const void*>(kernel), ctas, threads, rows, resident, &clusters, smem);
  if (e != cudaSuccess) return e;
  ClusterLaunch launch(dim3(static_cast<unsigned>(clusters * ctas)), dim3(threads), stream, ctas);
  launch.cfg.dynamicSmemBytes = smem;
  e = cudaLaunchKernelEx(&launch.cfg, kernel, args...);
  return e != cudaSuccess ? e : LastLaunchError();
}
#endif

}  // namespace jk
