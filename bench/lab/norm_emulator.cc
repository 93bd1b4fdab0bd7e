// Runs the real CUDA norm launcher and kernels on the CPU (one host thread per CUDA thread, as
// bench/lab/kernel_emulator.cc does for the transpose) and compares them with the CPU implementation.
// Device time is scarce: index math, stage rings, parameter groups and tier boundaries can be checked
// here first. Build and run with `bash bench/lab/norm_emulate.sh` (g++ and the CUDA headers, no GPU).
// What it cannot check: the bulk tier's copy engine and mbarriers (inline PTX): without __CUDA_ARCH__
// that kernel takes its plain-copy path, so its stage ring, row striding and parameter reloads are
// checked, its barrier protocol is not.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "emulator_barrier.h"

namespace jk_emu {

struct Warp {
  Barrier bar{32};
  float vals[32];
};

thread_local dim3 tid, bid;
dim3 bdim, gdim;
Barrier* bar = nullptr;
std::vector<Warp>* warps = nullptr;
unsigned char* dyn_smem = nullptr;
int sms = 132;
long launches = 0;

inline int LinearTid() { return int(tid.x + bdim.x * (tid.y + bdim.y * tid.z)); }

// One host thread per CUDA thread of a block; the threads walk the blocks together, meeting at a
// barrier after each block because __shared__ (a static) is reused by the next block.
template <typename... KArgs, typename... Args>
cudaError_t Launch(void (*kernel)(KArgs...), unsigned blocks, dim3 threads, size_t smem, cudaStream_t,
                   Args... args) {
  ++launches;
  gdim = dim3(blocks);
  bdim = threads;
  const int n = int(threads.x * threads.y * threads.z);
  if (n % 32 != 0) {
    std::printf("emulator: block of %d threads (not whole warps)\n", n);
    std::abort();
  }
  Barrier block_bar(n);
  bar = &block_bar;
  std::vector<Warp> ws(n / 32);
  warps = &ws;
  std::vector<unsigned char> smem_buf(smem + 256);
  dyn_smem = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_buf.data()) + 127) & ~uintptr_t(127));
  std::vector<std::thread> ts;
  ts.reserve(n);
  for (int t = 0; t < n; ++t) {
    ts.emplace_back([=] {
      tid = dim3(t % threads.x, (t / threads.x) % threads.y, t / (threads.x * threads.y));
      for (unsigned b = 0; b < blocks; ++b) {
        bid = dim3(b);
        kernel(args...);
        bar->Wait();
      }
    });
  }
  for (auto& t : ts) t.join();
  return cudaSuccess;
}

// `kernel<<<...>>>` with kernel a function-pointer variable becomes Launch(&kernel, ...).
template <typename... KArgs, typename... Args>
cudaError_t Launch(void (**kernel)(KArgs...), unsigned blocks, dim3 threads, size_t smem, cudaStream_t s,
                   Args... args) {
  return Launch(*kernel, blocks, threads, smem, s, args...);
}

// The launcher's cfg.gridDim / cfg.blockDim (rewritten by norm_emulate.sh: the built-in macros below
// would capture the member names).
constexpr dim3 cudaLaunchConfig_t::*kGrid = &cudaLaunchConfig_t::gridDim;
constexpr dim3 cudaLaunchConfig_t::*kBlock = &cudaLaunchConfig_t::blockDim;

template <typename... KArgs, typename... Args>
cudaError_t LaunchEx(const cudaLaunchConfig_t* cfg, void (*kernel)(KArgs...), Args... args) {
  for (unsigned i = 0; i < cfg->numAttrs; ++i) {
    if (cfg->attrs[i].id == cudaLaunchAttributeClusterDimension && cfg->attrs[i].val.clusterDim.x > 1) {
      std::printf("emulator: clusters are not emulated\n");
      std::abort();
    }
  }
  return Launch(kernel, cfg->gridDim.x, cfg->blockDim, cfg->dynamicSmemBytes, cfg->stream, args...);
}
}  // namespace jk_emu

// ---- CUDA built-ins and runtime calls, host versions ----------------------------------------------
#define threadIdx jk_emu::tid
#define blockIdx jk_emu::bid
#define blockDim jk_emu::bdim
#define gridDim jk_emu::gdim
#undef __shared__
#define __shared__ static
#define __launch_bounds__(...)
inline void __syncthreads() { jk_emu::bar->Wait(); }
inline void __trap() { std::abort(); }
inline float rsqrtf(float x) { return 1.f / std::sqrt(x); }
inline int4 __ldcs(const int4* p) { return *p; }
inline void __stcs(int4* p, int4 v) { *p = v; }
inline size_t __cvta_generic_to_shared(const void*) { return 0; }
inline float __shfl_xor_sync(unsigned, float v, int m, int) {
  const int t = jk_emu::LinearTid();
  jk_emu::Warp& w = (*jk_emu::warps)[t / 32];
  w.vals[t % 32] = v;
  w.bar.Wait();
  const float r = w.vals[(t % 32) ^ m];
  w.bar.Wait();
  return r;
}

// A shuffle from lane `src` of each `width`-lane segment (the short-row tier's shift broadcast).
inline float __shfl_sync(unsigned, float v, int src, int width) {
  const int t = jk_emu::LinearTid();
  jk_emu::Warp& w = (*jk_emu::warps)[t / 32];
  w.vals[t % 32] = v;
  w.bar.Wait();
  const float r = w.vals[(t % 32) / width * width + src];
  w.bar.Wait();
  return r;
}

cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int) {
  *v = a == cudaDevAttrComputeCapabilityMajor ? 9 : a == cudaDevAttrMaxSharedMemoryPerBlockOptin ? 232448 : jk_emu::sms;
  return cudaSuccess;
}
cudaError_t cudaGetLastError() { return cudaSuccess; }
template <typename F>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* a, F*) {
  std::memset(a, 0, sizeof(*a));
  a->sharedSizeBytes = 192;
  return cudaSuccess;
}
template <typename F>
cudaError_t cudaFuncSetAttribute(F*, cudaFuncAttribute attr, int v) {
  // The device rule behind the first GPU run's failure: static + dynamic <= the opt-in maximum.
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize && v + 192 > 232448) return cudaErrorInvalidValue;
  return cudaSuccess;
}
template <typename F>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, F*, int threads, size_t smem) {
  *n = int(std::min<size_t>({size_t(3), 2048 / size_t(threads), 232448 / (smem + 1216)}));
  return cudaSuccess;
}

#include "emu_norm_launch.cc"  // norm_launch.cu with the launches rewritten (norm_emulate.sh)
#include "emu_norm_short.cc"   // norm_short.cu, likewise
#include "cpu/norm_cpu.cc"

// The translation units the emulator does not build: it stands in for an sm_90 device (as its compute
// capability says), but neither the long-row ring (norm_long.cu: bulk copies and mbarriers throughout) nor
// the packed 16-bit row tier (norm_packed_block.cu: its unpacking is PTX) runs on the host, so both decline
// and the dispatch takes its next tier (two reads; the lane-group / CTA-per-row tiers for 16-bit rows).
// Nor does the cluster tier (norm_cluster.cu, session 8: cluster barriers and distributed shared memory).
namespace jk {
bool RunsSm90Code() { return true; }
namespace norm {
template <typename T, Kind K>
cudaError_t LaunchLongRows(const Params<T>&, cudaStream_t) { return cudaErrorNotSupported; }
template <typename T, Kind K>
cudaError_t LaunchClusterRows(const Params<T>&, cudaStream_t) { return cudaErrorNotSupported; }
template <typename T, Kind K>
cudaError_t LaunchBlockPerRowPacked(const Params<T>&, cudaStream_t, const PackedBlockConfig&) {
  return cudaErrorNotSupported;
}
}  // namespace norm
}  // namespace jk

// ---- the checks -----------------------------------------------------------------------------------
namespace {

int failures = 0, cases = 0;

template <typename T>
float Get(const void* p, int64_t i);
template <>
float Get<float>(const void* p, int64_t i) { return static_cast<const float*>(p)[i]; }
template <>
float Get<__nv_bfloat16>(const void* p, int64_t i) { return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]); }
template <>
float Get<__half>(const void* p, int64_t i) { return __half2float(static_cast<const __half*>(p)[i]); }

template <typename T>
void Fill(void* p, int64_t n, std::mt19937& g, float loc, float scale) {
  std::normal_distribution<float> d(loc, scale);
  for (int64_t i = 0; i < n; ++i) {
    const float v = d(g);
    if constexpr (std::is_same_v<T, float>) static_cast<float*>(p)[i] = v;
    else if constexpr (std::is_same_v<T, __half>) static_cast<__half*>(p)[i] = __float2half_rn(v);
    else static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v);
  }
}

// rows x n (one scale/bias row per group), x at element offset `offset` of 16-byte aligned storage.
template <typename T>
void Check(jk::DType dt, bool layer, int64_t rows, int64_t n, int64_t groups, int offset, bool stats) {
  jk::NormShape s;
  s.outer = rows;
  s.n = n;
  s.scale_groups = s.bias_groups = groups;
  const int64_t total = rows * n;
  auto alloc = [](int64_t count) { return std::vector<T>(count + 64); };
  auto aligned = [](std::vector<T>& v, int off) {
    return reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(v.data()) + 15) & ~uintptr_t(15)) + off;
  };
  auto xs = alloc(total), ys = alloc(total), rs = alloc(total), ss = alloc(groups * n), bs = alloc(groups * n);
  T *x = aligned(xs, offset), *y = aligned(ys, offset), *r = aligned(rs, offset), *sc = aligned(ss, 0),
    *bi = aligned(bs, 0);
  std::mt19937 g(cases * 7919 + 1);
  Fill<T>(x, total, g, 0.5f, 2.f);
  Fill<T>(sc, groups * n, g, 1.f, 0.5f);
  Fill<T>(bi, groups * n, g, 0.f, 0.5f);
  std::vector<float> mean(rows), rstd(rows), cmean(rows), crstd(rows);
  cudaError_t e;
  if (layer) {
    e = jk::LaunchLayerNorm(nullptr, dt, x, sc, bi, y, stats ? mean.data() : nullptr, stats ? rstd.data() : nullptr,
                            s, 1e-5f);
    jk::cpu::LayerNorm(dt, x, sc, bi, r, cmean.data(), crstd.data(), s, 1e-5f);
  } else {
    e = jk::LaunchRmsNorm(nullptr, dt, x, sc, y, s, 1e-6f);
    jk::cpu::RmsNorm(dt, x, sc, r, s, 1e-6f);
  }
  ++cases;
  const float tol = std::is_same_v<T, float> ? 2e-5f : std::is_same_v<T, __half> ? 4e-3f : 2e-2f;
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < total; ++i) {
    const float a = Get<T>(y, i), b = Get<T>(r, i);
    if (!(std::fabs(a - b) <= tol * (1.f + std::fabs(b)))) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  if (stats && layer) {
    for (int64_t i = 0; i < rows; ++i) {
      if (!(std::fabs(mean[i] - cmean[i]) <= 1e-4f * (1.f + std::fabs(cmean[i]))) ||
          !(std::fabs(rstd[i] - crstd[i]) <= 1e-3f * crstd[i]))
        ++bad;
    }
  }
  if (e != cudaSuccess || bad) {
    ++failures;
    std::printf("MISMATCH %s dtype=%d rows=%ld n=%ld groups=%ld offset=%d: err=%d, %ld bad (first %ld: %g vs %g)\n",
                layer ? "layer_norm" : "rms_norm", int(dt), long(rows), long(n), long(groups), offset, int(e),
                long(bad), long(first), first >= 0 ? Get<T>(y, first) : 0.f, first >= 0 ? Get<T>(r, first) : 0.f);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  jk_emu::sms = argc > 1 ? std::atoi(argv[1]) : 2;  // few SMs: small grids, so persistent rings wrap
  const char* tier = std::getenv("JK_NORM_TIER");
  // (rows, n): lane groups, the tier boundaries (1024/1032, 2048/2052/2056, 8192/8200, 16384/16392), odd.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {
      {37, 8}, {21, 32}, {9, 100}, {11, 128}, {5, 1024}, {23, 1032}, {13, 2048}, {7, 2052}, {19, 2056},
      {5, 4096}, {11, 8192}, {3, 8200}, {4, 16384}, {2, 16392}, {3, 33}, {3, 2049},
      // more rows than the persistent grid (<= 6 CTAs on 2 SMs), two parameter groups: CTAs cross groups
      {40, 1032}, {30, 2056}, {26, 8192}, {20, 16384},
      // the short-row tier's groups over several steps (<= 6 CTAs of 256 threads on 2 SMs)
      {800, 32}, {200, 128}, {61, 1000},
      // the packed short-row tier (16-bit n = 32 ... 256, one parameter row: odd rows, not multiples of 3),
      // 2051 x 128 and 601 x 256 over several grid-stride steps (32 CTAs on 2 SMs)
      {803, 32}, {97, 64}, {2051, 128}, {601, 256}};
  // EMU_MAX_N: only rows of at most that many columns (a quick check of the short-row tiers).
  const int64_t max_n = std::getenv("EMU_MAX_N") ? std::atoll(std::getenv("EMU_MAX_N")) : INT64_MAX;
  for (auto [rows, n] : shapes) {
    if (n > max_n) continue;
    for (int layer = 0; layer < 2; ++layer) {
      const int64_t groups = rows % 2 ? 1 : 2;  // rows per group = rows / groups
      Check<float>(jk::DType::kF32, layer, rows, n, groups, 0, layer);
      Check<__nv_bfloat16>(jk::DType::kBF16, layer, rows, n, groups, 0, false);
      Check<__half>(jk::DType::kF16, layer, rows, n, rows % 3 == 0 ? 3 : 1, 0, layer);
      if (n % 16 == 0) Check<__nv_bfloat16>(jk::DType::kBF16, layer, rows, n, 1, 1, false);  // misaligned x/y
    }
  }
  std::printf("emulated %d cases (%ld launches, %d SMs, JK_NORM_TIER=%s): %d mismatches\n", cases,
              jk_emu::launches, jk_emu::sms, tier ? tier : "(unset)", failures);
  return failures != 0;
}
