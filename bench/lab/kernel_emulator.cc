// Runs the real CUDA transpose launcher and kernels on the CPU, one host thread per CUDA thread, and
// compares every result with the CPU implementation. It exists because device time is scarce: tile
// tables, index math and edge handling can be checked here first. Build and run with
// `bash bench/lab/emulate.sh` (g++ and the CUDA headers; no GPU, no libcudart).
//
// How: the CUDA built-ins become host objects (threadIdx is thread_local, __syncthreads a barrier,
// __shared__ a function-local static, shared by the block's threads because blocks run one at a time);
// emulate.sh rewrites each `kernel<<<blocks, threads, smem, stream>>>(a)` of transpose_launch.cu into
// `jk_emu::Launch(kernel, blocks, threads, a)`, except the tensor-map row copy's (RowCopyTensor: no TMA here),
// which becomes `return cudaErrorNotSupported;`.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "emulator_barrier.h"

namespace jk_emu {

thread_local dim3 tid, bid;
dim3 bdim, gdim;
Barrier* bar = nullptr;
// A warp's shuffle exchange (the padded tiles' word loads, session 37): every lane writes, then reads its source.
struct Warp {
  Barrier bar{32};
  uint32_t vals[32];
};
std::vector<Warp>* warps = nullptr;
int sms = 132;
long launches = 0;
// Launches per argument struct (LaunchesOf<transpose::RowTileArgs>(): the tiled row copies).
template <typename Args>
long& LaunchesOf() {
  static long n = 0;
  return n;
}
alignas(16) unsigned char dynamic_smem[228 * 1024];  // extern __shared__ tiles (TileSmem)
// common/launch.h's cfg.gridDim / cfg.blockDim (rewritten by emulate.sh: the built-in macros below would
// capture the member names).
constexpr dim3 cudaLaunchConfig_t::*kGrid = &cudaLaunchConfig_t::gridDim;
constexpr dim3 cudaLaunchConfig_t::*kBlock = &cudaLaunchConfig_t::blockDim;

// One host thread per CUDA thread of a block; the threads walk the blocks together, meeting at a
// barrier after each block because __shared__ (a static) is reused by the next block.
template <typename Args>
void Launch(void (*kernel)(Args), dim3 grid, int threads, Args a) {
  ++launches;
  ++LaunchesOf<Args>();
  const int blocks = static_cast<int>(grid.x * grid.y * grid.z);
  gdim = grid;
  bdim = dim3(threads);
  Barrier block_bar(threads);
  bar = &block_bar;
  std::vector<Warp> ws((threads + 31) / 32);
  warps = &ws;
  std::vector<std::thread> ts;
  ts.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([=] {
      tid = dim3(t);
      for (int b = 0; b < blocks; ++b) {
        bid = dim3(b % grid.x, b / grid.x % grid.y, b / (grid.x * grid.y));  // x fastest, as the GPU's order
        kernel(a);
        bar->Wait();
      }
    });
  }
  for (auto& t : ts) t.join();
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
#define JK_EMULATOR_DYNAMIC_SMEM jk_emu::dynamic_smem
inline void __syncthreads() { jk_emu::bar->Wait(); }
inline void __trap() { std::abort(); }  // JK_DEVICE_ASSERT
inline float __fdividef(float a, float b) { return a / b; }  // common/device.cuh's Welford::Merge (unused here)
template <typename T>
T __ldg(const T* p) { return *p; }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const uint64_t v = (uint64_t(y) << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= unsigned((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}
inline float __shfl_xor_sync(unsigned, float v, int, int = 32) { return v; }  // unused by the transpose
inline float __shfl_sync(unsigned, float v, int, int = 32) { return v; }      // unused by the transpose
// Every lane of the warp must call it (as on the GPU with a full mask); a lane whose source is past its `width`-lane
// segment reads its own value.
inline uint32_t __shfl_down_sync(unsigned, uint32_t v, unsigned delta, int width = 32) {
  const int t = int(jk_emu::tid.x), lane = t % 32;
  jk_emu::Warp& w = (*jk_emu::warps)[t / 32];
  w.vals[lane] = v;
  w.bar.Wait();
  const int src = lane % width + int(delta) < width ? lane + int(delta) : lane;
  const uint32_t r = w.vals[src];
  w.bar.Wait();
  return r;
}
inline uint32_t __funnelshift_r(uint32_t lo, uint32_t hi, unsigned shift) {
  const uint64_t v = (uint64_t(hi) << 32) | lo;
  return uint32_t(v >> (shift & 31));
}

cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr, int) { *v = jk_emu::sms; return cudaSuccess; }
cudaError_t cudaGetLastError() { return cudaSuccess; }
cudaError_t cudaFuncSetAttribute(const void*, cudaFuncAttribute, int) { return cudaSuccess; }
// LaunchRowCopyTensor names its kernel directly (never reached: no tensor-map encoder here, see below).
template <typename F>
cudaError_t cudaFuncSetAttribute(F*, cudaFuncAttribute, int) { return cudaSuccess; }
template <typename F>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, F*, int, size_t) { *n = 1; return cudaSuccess; }
// common/tma_host.h: no driver, so no tensor-map encoder; the "rowtma" lab tier reports not supported and the
// row copy falls back to the other tiers.
cudaError_t cudaGetDriverEntryPointByVersion(const char*, void** f, unsigned, unsigned long long,
                                             cudaDriverEntryPointQueryResult* q) {
  *f = nullptr;
  if (q != nullptr) *q = cudaDriverEntryPointSymbolNotFound;
  return cudaErrorNotSupported;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind, cudaStream_t) {
  std::memcpy(dst, src, n);
  return cudaSuccess;
}

#include "emu_transpose_launch.cc"  // transpose_launch.cu with the launches rewritten (emulate.sh)
#include "cpu/transpose_cpu.cc"

// common/sm90.cu is not built here: the emulator stands in for an sm_90 device (the bulk-row tier runs its
// plain-copy stand-in), and ComputeMajor still gates the Hopper tiers by its attribute answer.
bool jk::RunsSm90Code() { return true; }

// ---- the checks -----------------------------------------------------------------------------------
namespace {

int failures = 0, cases = 0;

void Check(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm, int elem, int offset,
           const char* what) {
  int64_t n = 1;
  for (auto d : dims) n *= d;
  const size_t bytes = size_t(n) * elem;
  // 16-byte aligned storage, then an optional offset (a slice at an odd element inside a jit).
  std::vector<unsigned char> xs(bytes + 64), ys(bytes + 64), ref(bytes + 64);
  auto align = [](unsigned char* p) {
    return reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(p) + 15) & ~uintptr_t(15));
  };
  unsigned char* x = align(xs.data()) + offset * elem;
  unsigned char* y = align(ys.data()) + offset * elem;
  unsigned char* r = align(ref.data()) + offset * elem;
  std::mt19937 g(cases);
  for (size_t i = 0; i < bytes; ++i) x[i] = static_cast<unsigned char>(g());
  std::memset(y, 0xcd, bytes);
  const int align_bytes = static_cast<int>(
      std::min<uintptr_t>(8, (reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y) | 8) &
                                 (~(reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y) | 8) + 1)));
  jk::TransposePlan plan, cpu_plan;
  if (!jk::PlanTranspose(dims.data(), perm.data(), int(dims.size()), elem, align_bytes, &plan) ||
      !jk::PlanTranspose(dims.data(), perm.data(), int(dims.size()), elem, align_bytes, &cpu_plan)) {
    std::printf("plan failed: %s\n", what);
    ++failures;
    return;
  }
  // EMU_ROWS_ONLY (emulate.sh, under lab tokens that change only the row copy): skip every other case.
  const char* rows_only = std::getenv("EMU_ROWS_ONLY");
  if (rows_only != nullptr && *rows_only != '\0' && plan.kind != jk::TransposePlan::kRowCopy) return;
  if (std::getenv("EMU_VERBOSE")) std::printf("case %d: %s elem=%d offset=%d kind=%d\n", cases, what, elem, offset, int(plan.kind)), std::fflush(stdout);
  jk::cpu::Transpose(cpu_plan, x, r);
  jk::LaunchTranspose(nullptr, plan, x, y);
  ++cases;
  if (std::memcmp(y, r, bytes) != 0) {
    ++failures;
    std::printf("MISMATCH %s elem=%d offset=%d kind=%d plan elem=%d\n", what, elem, offset, int(plan.kind),
                plan.elem_bytes);
    std::fflush(stdout);
  }
}

std::string Describe(const std::vector<int64_t>& d, const std::vector<int64_t>& p) {
  std::string s = "(";
  for (auto v : d) s += std::to_string(v) + ",";
  s += ") perm (";
  for (auto v : p) s += std::to_string(v) + ",";
  return s + ")";
}

}  // namespace

int main(int argc, char** argv) {
  jk_emu::sms = argc > 1 ? std::atoi(argv[1]) : 132;  // few SMs: the big-tile tier on small shapes
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{64, 128}, {1, 0}},          {{128, 256}, {1, 0}},         {{33, 65}, {1, 0}},
      {{3, 1025}, {1, 0}},          {{130, 97}, {1, 0}},          {{256, 128}, {1, 0}},
      {{3, 64, 48}, {0, 2, 1}},     {{2, 8, 16, 64}, {0, 2, 1, 3}}, {{3, 5, 7, 3}, {2, 0, 1, 3}},
      {{8, 16, 32, 8, 2}, {4, 0, 3, 1, 2}}, {{64, 32, 2}, {1, 0, 2}}, {{16, 1, 24, 1, 40}, {4, 3, 0, 2, 1}},
      {{4, 6, 8, 10}, {1, 0, 3, 2}}, {{2, 3, 4, 5, 6, 7}, {5, 3, 1, 0, 2, 4}}, {{1, 512}, {1, 0}},
      {{136, 264}, {1, 0}},         {{2, 136, 128}, {0, 2, 1}},   {{144, 272}, {1, 0}},
      {{2, 48, 400}, {0, 2, 1}},    {{520, 1040}, {1, 0}},
      // ragged sides (session 37: global accesses of 8, 4 or 2 bytes, or one element, on the swizzled tiles): int8
      // 8-byte and bf16 4-byte rows, float32 8-byte rows, mixed widths with edge tiles, a batch axis
      {{40, 24}, {1, 0}},           {{34, 66}, {1, 0}},           {{260, 1030}, {1, 0}},
      {{3, 200, 264}, {0, 2, 1}},
      // one side 16-byte aligned, the other odd (the padded tiles with one 16-byte side): int8 / bf16 rows in, out
      {{33, 48}, {1, 0}},           {{48, 33}, {1, 0}},           {{201, 1040}, {1, 0}},
      {{1040, 201}, {1, 0}},        {{3, 67, 144}, {0, 2, 1}},
      // compact flavour with split groups / general flavour (tests/test_transpose.py FLAVOUR_CASES)
      {{3, 4, 9, 16, 2}, {4, 0, 3, 1, 2}}, {{3, 4, 9, 15, 2}, {4, 0, 3, 1, 2}},
      {{4, 2, 3, 2, 36}, {0, 4, 2, 3, 1}}, {{6, 2, 2, 2, 7}, {4, 1, 3, 0, 2}}, {{7, 5, 2, 3}, {3, 1, 2, 0}},
      {{3, 4, 40, 48}, {1, 0, 3, 2}},   {{6, 3, 2, 3, 2}, {2, 4, 0, 3, 1}},
      // general flavour (two batch axes); with 2 "SMs" int8 takes the 256x256-byte tile, with edge tiles
      {{3, 2, 272, 528}, {1, 0, 3, 2}},
      // row copies (last axis kept), runs of 2-136 elements: 16 / 32 / 64 / 128-byte runs at several element sizes
      // for the tiled row copy (transpose_rowtile_kernels.cuh: the default for 16/32/128-byte runs whose sides fill
      // an 8 KB tile, every power-of-two run of 16-128 bytes under the rowtile tokens), 48 / 96-byte and over
      // 128-byte runs for the input-order row copy; two distinct row axes with edge tiles on both sides, batch axes,
      // sides shorter than a tile.
      {{3, 33, 16}, {1, 0, 2}},  {{33, 3, 16}, {1, 0, 2}},  {{37, 45, 32}, {1, 0, 2}}, {{17, 9, 64}, {1, 0, 2}},
      {{2, 37, 45, 16}, {0, 2, 1, 3}}, {{3, 1025, 5, 8}, {0, 2, 1, 3}}, {{5, 3, 33, 128}, {0, 2, 1, 3}},
      {{2, 3, 4, 5, 32}, {3, 0, 2, 1, 4}}, {{2, 3, 4, 5, 16}, {2, 3, 0, 1, 4}}, {{1, 40, 1, 40, 8}, {3, 0, 2, 1, 4}},
      {{64, 32, 4}, {1, 0, 2}},  {{7, 3, 96}, {1, 0, 2}},  {{4, 9, 136}, {1, 0, 2}},
      {{2, 3, 4, 5, 6, 8}, {4, 3, 2, 1, 0, 5}}, {{3, 7, 5, 24}, {2, 0, 1, 3}}, {{40, 33, 2}, {1, 0, 2}},
  };
  for (int elem : {1, 2, 4, 8}) {
    for (auto& [d, p] : shapes) {
      const std::string what = Describe(d, p);
      Check(d, p, elem, 0, what.c_str());
      Check(d, p, elem, 1, (what + " misaligned").c_str());
      // buffers 4- or 8-byte aligned only: the narrower global accesses (session 37)
      if (elem <= 2) Check(d, p, elem, 4 / elem, (what + " 4-byte aligned").c_str());
      if (elem <= 4) Check(d, p, elem, 8 / elem, (what + " 8-byte aligned").c_str());
    }
  }
  std::mt19937 g(7);  // random permutations of random small shapes
  for (int i = 0; i < 60; ++i) {
    const int rank = 2 + g() % 4;
    std::vector<int64_t> d(rank), p(rank);
    int64_t n = 1;
    for (int k = 0; k < rank; ++k) d[k] = 1 + g() % 40, p[k] = k, n *= d[k];
    if (n > 40000) continue;  // emulated threads are slow: keep the random cases small
    std::shuffle(p.begin(), p.end(), g);
    const std::string what = Describe(d, p);
    Check(d, p, 1 << (g() % 4), 0, what.c_str());
  }
  std::fflush(stdout);
  std::printf("emulated %d cases (%ld launches, %ld tiled row copies, %d SMs): %d mismatches\n", cases,
              jk_emu::launches, jk_emu::LaunchesOf<jk::transpose::RowTileArgs>(), jk_emu::sms, failures);
  return failures != 0;
}
