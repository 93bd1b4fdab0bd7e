// Runs the real CUDA norm launcher and kernels on the CPU (one host thread per CUDA thread, as
// bench/lab/kernel_emulator.cc does for the transpose) and compares them with the CPU implementation
// (cpu/norm_cpu.cc, float32 accumulation). Device time is scarce: index math, parameter groups, lane-group
// layouts and tier boundaries can be checked here first. Build and run with `bash bench/lab/norm_emulate.sh`
// (g++ and the CUDA headers, no GPU). norm_emulate.sh copies the norm sources with every launch rewritten
// (`kernel<<<...>>>(args)` and cudaLaunchKernelEx become jk_emu::Launch / LaunchEx below) and the packed row
// tier's PTX unpacking replaced by the same bit operations in C++.
//
// The emulated device does not run sm_90 code: RunsSm90Code() is false (as on a device that JITs the compute_80
// PTX), so the launcher takes exactly the dispatch it takes there. Covered (built from the real launchers):
//   norm_launch.cu      lane groups (GroupPerRowRegisters, EarlyParams under "proposed"), a CTA per row in registers
//                       (BlockPerRowRegisters via cudaLaunchKernelEx with cluster == 1, its lean variant, the 64-
//                       register TwoPerSm form), two reads, ApplyStats; the strided / split tiers are built but
//                       not exercised (every case here has inner == 1)
//   norm_short.cu       the packed short-row tier (ShortRowsPacked, C x W x R) and the persistent short-row tier
//   norm_window.cu      rows with n % (16 / sizeof(T)) != 0 over aligned x and y (WindowRowsNorm)
//   norm_packed_block.cu  bf16/f16 rows of 513-32768 columns, a CTA or a warp per row (BlockPerRowPacked)
// Not covered (sm_90 hardware: clusters and distributed shared memory, bulk copies / mbarriers): the bulk tier
// (BlockPerRowBulkSmem: BulkSmemFits needs RunsSm90Code), the cluster and hybrid row tiers (norm_cluster.cu), the
// row-pairs forms (norm_cluster_pairs.cu: LaunchClusterRowPairs, LaunchRowPairsShort), the long-row ring
// (norm_long.cu), and BlockPerRowRegisters with cluster > 1 (LaunchEx aborts on a cluster launch). Those .cu files
// are not built; their launchers are replaced below by ones that decline as the real ones do without sm_90 code,
// so rows past 16384 float32 / 32768 16-bit columns take the two-read kernel here (on an H200 the cluster tiers).
// norm_emulate.sh runs the default dispatch and forced JK_NORM_TIER settings; the emulator counts launches per kernel
// and fails when a kernel named in EMU_EXPECT never ran (a forced tier that no longer parses or applies), when no
// case ran, or on any mismatch against the CPU implementation (tolerance: 2e-5 float32, 4e-3 f16, 2e-2 bf16, relative
// to 1 + |reference|; LayerNorm's mean / rstd outputs too).
// Not checked: warp-level timing, memory ordering between blocks, register pressure: blocks run one at a
// time and every thread of a block is a host thread.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "emulator_barrier.h"

namespace jk_emu {

struct Warp {
  Barrier bar{32};
  uint64_t vals[32];
};

thread_local dim3 tid, bid;
dim3 bdim, gdim;
Barrier* bar = nullptr;
std::vector<Warp>* warps = nullptr;
unsigned char* dyn_smem = nullptr;
int sms = 132;
long launches = 0;

inline int LinearTid() { return int(tid.x + bdim.x * (tid.y + bdim.y * tid.z)); }

[[noreturn]] inline void NamedBarrierUnsupported() {
  std::printf("emulator: named barriers (bar.sync / bar.arrive) are not emulated\n");
  std::abort();
}

// One host thread per CUDA thread of a block; the threads walk the blocks together (x fastest, then y, z),
// meeting at a barrier after each block because __shared__ (a static) is reused by the next block.
// Launches per kernel name (its template arguments dropped; "norm::" too).
std::map<std::string, long>& Launched() {
  static std::map<std::string, long> m;
  return m;
}
void Count(const char* name) {
  std::string s(name);
  s = s.substr(0, s.find('<'));
  if (s.rfind("norm::", 0) == 0) s = s.substr(6);
  ++Launched()[s];
}

template <typename... KArgs, typename... Args>
cudaError_t Launch(void (*kernel)(KArgs...), dim3 grid, dim3 threads, size_t smem, cudaStream_t, Args... args) {
  ++launches;
  gdim = grid;
  bdim = threads;
  const int n = int(threads.x * threads.y * threads.z);
  if (n % 32 != 0 || n > 1024 || n == 0) {
    std::printf("emulator: block of %d threads (not whole warps, or too many)\n", n);
    std::abort();
  }
  if (smem > 232448) {
    std::printf("emulator: %zu bytes of dynamic shared memory\n", smem);
    std::abort();
  }
  Barrier block_bar(n);
  bar = &block_bar;
  std::vector<Warp> ws(n / 32);
  warps = &ws;
  std::vector<unsigned char> smem_buf(smem + 256);
  dyn_smem = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_buf.data()) + 127) & ~uintptr_t(127));
  const uint64_t blocks = uint64_t(grid.x) * grid.y * grid.z;
  std::vector<std::thread> ts;
  ts.reserve(n);
  for (int t = 0; t < n; ++t) {
    ts.emplace_back([=] {
      tid = dim3(t % threads.x, (t / threads.x) % threads.y, t / (threads.x * threads.y));
      for (uint64_t b = 0; b < blocks; ++b) {
        bid = dim3(unsigned(b % grid.x), unsigned(b / grid.x % grid.y), unsigned(b / (uint64_t(grid.x) * grid.y)));
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
cudaError_t Launch(const char* name, void (*kernel)(KArgs...), dim3 grid, dim3 threads, size_t smem, cudaStream_t s,
                   Args... args) {
  Count(name);
  return Launch(kernel, grid, threads, smem, s, args...);
}
template <typename... KArgs, typename... Args>
cudaError_t Launch(const char* name, void (**kernel)(KArgs...), dim3 grid, dim3 threads, size_t smem, cudaStream_t s,
                   Args... args) {
  Count(name);
  return Launch(*kernel, grid, threads, smem, s, args...);
}

// The launcher's cfg.gridDim / cfg.blockDim (rewritten by norm_emulate.sh: the built-in macros below
// would capture the member names).
constexpr dim3 cudaLaunchConfig_t::*kGrid = &cudaLaunchConfig_t::gridDim;
constexpr dim3 cudaLaunchConfig_t::*kBlock = &cudaLaunchConfig_t::blockDim;

// cudaLaunchKernelEx: no clusters here (the launcher asks for cluster == 1 wherever RunsSm90Code() is false).
template <typename... KArgs, typename... Args>
cudaError_t LaunchEx(const char* name, const cudaLaunchConfig_t* cfg, void (*kernel)(KArgs...), Args... args) {
  Count(name);
  for (unsigned i = 0; i < cfg->numAttrs; ++i) {
    if (cfg->attrs[i].id == cudaLaunchAttributeClusterDimension && cfg->attrs[i].val.clusterDim.x > 1) {
      std::printf("emulator: clusters are not emulated\n");
      std::abort();
    }
  }
  return Launch(kernel, cfg->gridDim, cfg->blockDim, cfg->dynamicSmemBytes, cfg->stream, args...);
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
inline float __fdividef(float a, float b) { return a / b; }
inline int4 __ldcs(const int4* p) { return *p; }
inline void __stcs(int4* p, int4 v) { *p = v; }
template <typename T>
T __ldg(const T* p) { return *p; }
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline size_t __cvta_generic_to_shared(const void*) { return 0; }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const uint64_t v = (uint64_t(y) << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= unsigned((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}
// Shuffles: every lane of the warp writes its value, then reads its source lane's (lanes in `width`-lane segments).
// Any value of up to 8 bytes, passed through unchanged (not through a float).
template <typename V>
V Shuffle(V v, int kind, int arg, int width) {
  static_assert(sizeof(V) <= 8 && std::is_trivially_copyable_v<V>, "32- and 64-bit shuffles");
  const int t = jk_emu::LinearTid(), lane = t % 32;
  jk_emu::Warp& w = (*jk_emu::warps)[t / 32];
  std::memcpy(&w.vals[lane], &v, sizeof(V));
  w.bar.Wait();
  int src;
  if (kind == 0) {  // xor: a lane outside the segment reads its own value
    src = lane ^ arg;
    if (src / width != lane / width) src = lane;
  } else {  // from lane `arg` of the segment
    src = lane / width * width + arg % width;
  }
  V r;
  std::memcpy(&r, &w.vals[src], sizeof(V));
  w.bar.Wait();
  return r;
}
template <typename V>
V __shfl_xor_sync(unsigned, V v, int m, int width = 32) { return Shuffle(v, 0, m, width); }
template <typename V>
V __shfl_sync(unsigned, V v, int src, int width = 32) { return Shuffle(v, 1, src, width); }

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
// The runtime's C entry point, which common/launch.h's CachedCtasPerSm calls with the kernel as const void*: the same.
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, const void* f, int threads, size_t smem) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor<const void>(n, f, threads, smem);
}

// common/sm90.cu is not built: the emulated device runs no sm_90 code (see the header comment).
namespace jk {
bool RunsSm90Code() { return false; }
}  // namespace jk

#include "emu_norm_launch.cc"         // norm_launch.cu with the launches rewritten (norm_emulate.sh)
#include "emu_norm_short.cc"          // norm_short.cu, likewise
#include "emu_norm_window.cc"         // norm_window.cu
#include "emu_norm_packed_block.cc"   // norm_packed_block.cu (its PTX unpacking rewritten too)
#include "cpu/norm_cpu.cc"
#include "cpu/cpu_convert.cc"        // its float <-> bf16 / f16 conversions

// The launchers the emulator does not build (norm_cluster.cu, norm_cluster_pairs.cu, norm_long.cu): each starts
// with `if (p.inner != 1 || !RunsSm90Code()) return cudaErrorNotSupported;` (PairsFit, Sm90() for the long rows),
// so with RunsSm90Code() false these are what they do.
namespace jk::norm {
template <typename T, Kind K>
cudaError_t LaunchClusterRows(const Params<T>&, cudaStream_t) {
  if (RunsSm90Code()) std::abort();
  return cudaErrorNotSupported;
}
template <typename T, Kind K>
cudaError_t LaunchClusterRowPairs(const Params<T>&, cudaStream_t) {
  if (RunsSm90Code()) std::abort();
  return cudaErrorNotSupported;
}
template <typename T, Kind K>
cudaError_t LaunchRowPairsShort(const Params<T>&, cudaStream_t) {
  if (RunsSm90Code()) std::abort();
  return cudaErrorNotSupported;
}
template <typename T, Kind K>
cudaError_t LaunchLongRows(const Params<T>&, cudaStream_t) {
  if (RunsSm90Code()) std::abort();
  return cudaErrorNotSupported;
}
}  // namespace jk::norm

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
      {803, 32}, {97, 64}, {2051, 128}, {601, 256},
      // rows of 3 and 5 packs per lane (16-bit 48 / 80: 6 / 10 packs; float32 48 / 80: 12 / 20 packs), one
      // parameter row for every dtype (odd rows, not multiples of 3)
      {67, 48}, {35, 80},
      // the one-pack lanes (session 40): whole CTAs (float16's one parameter row: 832 x 32, 256 x 128), ragged grids
      // (803 x 32 above, 129 x 32), fewer rows than a CTA (21 x 32, 11 x 128 above)
      {832, 32}, {129, 32}, {256, 128}};
  // EMU_MAX_N: only rows of at most that many columns (a quick check of the short-row tiers).
  const int64_t max_n = std::getenv("EMU_MAX_N") ? std::atoll(std::getenv("EMU_MAX_N")) : INT64_MAX;
  // EMU_HALF_ONLY=1: bf16/f16 cases only (the tiers forced for 16-bit rows: pblock, pwarp).
  const bool half_only = std::getenv("EMU_HALF_ONLY") != nullptr && std::atoi(std::getenv("EMU_HALF_ONLY")) != 0;
  for (auto [rows, n] : shapes) {
    if (n > max_n) continue;
    for (int layer = 0; layer < 2; ++layer) {
      const int64_t groups = rows % 2 ? 1 : 2;  // rows per group = rows / groups
      if (!half_only) Check<float>(jk::DType::kF32, layer, rows, n, groups, 0, layer);
      Check<__nv_bfloat16>(jk::DType::kBF16, layer, rows, n, groups, 0, false);
      Check<__half>(jk::DType::kF16, layer, rows, n, rows % 3 == 0 ? 3 : 1, 0, layer);
      if (n % 16 == 0) Check<__nv_bfloat16>(jk::DType::kBF16, layer, rows, n, 1, 1, false);  // misaligned x/y
    }
  }
  std::string kernels;
  for (auto& [name, count] : jk_emu::Launched()) kernels += " " + name + "=" + std::to_string(count);
  std::printf("emulated %d cases (%ld launches, %d SMs, JK_NORM_TIER=%s): %d mismatches; launches:%s\n", cases,
              jk_emu::launches, jk_emu::sms, tier ? tier : "(unset)", failures, kernels.c_str());
  // EMU_EXPECT (norm_emulate.sh: comma-separated kernel names): each must have run, so a forced tier that no longer
  // parses, or no longer takes any case, fails instead of checking the default dispatch again.
  if (const char* expect = std::getenv("EMU_EXPECT")) {
    std::string list = expect;
    for (size_t b = 0; b < list.size();) {
      size_t e = list.find(',', b);
      if (e == std::string::npos) e = list.size();
      const std::string name = list.substr(b, e - b);
      if (!name.empty() && jk_emu::Launched().count(name) == 0) {
        std::printf("NOT EXERCISED: %s never launched (JK_NORM_TIER=%s)\n", name.c_str(), tier ? tier : "(unset)");
        ++failures;
      }
      b = e + 1;
    }
  }
  if (cases == 0) ++failures;
  return failures != 0;
}
