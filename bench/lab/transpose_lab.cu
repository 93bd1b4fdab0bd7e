// Transpose lab: the classic optimisation sequence, each step timed on the same 8192x8192 float32
// matrix (256 MiB each way, far past the 50 MB L2) with cudaEvents; prints GB/s (bytes read + written)
// and the fraction of the copy ceiling measured in the same process. Measured on an H200
// (bench/results/transpose_h200.md; copy kernel 3785 GB/s, cudaMemcpy 4099, XLA's x*c 4288):
//
//   0  copy       float4 copy kernel: the ceiling (plus cudaMemcpy D2D for reference)      3785 GB/s
//   1  naive      one element per thread, coalesced reads, 32-way strided writes           492 GB/s
//                 (session 4, bench/lab/transpose_s4_h200.md; session 1's run had an indexing bug)
//   2  smem       32x32 shared-memory tile, coalesced both ways, 32-way bank conflicts     1726 GB/s
//                 on the column reads
//   3  padded     the same tile padded to 32x33: conflict-free (the classic Harris kernel) 3468 GB/s
//   4  vec16      the production kTiledVec16Swizzled: 64x64 tile, 16-byte loads AND        3841 GB/s
//                 stores, XOR swizzle instead of padding (padding breaks 16-byte smem
//                 alignment), 4 vectors per thread each way
//   5  tma        TMA tile load (128-byte swizzle) -> smem transpose -> TMA tile store,    3389 GB/s
//                 32x32 tiles, one per 128-thread block: loses to 4, so it stays in the lab
// The sweep after them times the production kernel's tile/block choices per element size (the
// launcher's TiledConfig table comes from it).
//
// Build and run (GPU machine):  nvcc -O3 -std=c++17 -arch=sm_90a -Icuda bench/lab/transpose_lab.cu \
//                                    -o /tmp/lab && /tmp/lab [rows cols]
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lab_common.cuh"  // CHECK
#include "transpose/transpose_kernels.cuh"


// ---- variants -----------------------------------------------------------------------------------
__global__ void CopyVec(const float4* x, float4* y, int64_t n4) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n4; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = x[i];
}

__global__ void Naive(const float* x, float* y, int rows, int cols) {
  const int c = blockIdx.x * 32 + threadIdx.x, r = blockIdx.y * 32 + threadIdx.y;
  for (int k = 0; k < 32; k += 8)
    if (r + k < rows && c < cols) y[int64_t(c) * rows + r + k] = x[int64_t(r + k) * cols + c];
}

template <int kPad>
__global__ void SmemTile(const float* x, float* y, int rows, int cols) {
  __shared__ float tile[32][32 + kPad];
  const int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32, tx = threadIdx.x, ty = threadIdx.y;
  for (int k = 0; k < 32; k += 8)
    if (r0 + ty + k < rows && c0 + tx < cols) tile[ty + k][tx] = x[int64_t(r0 + ty + k) * cols + c0 + tx];
  __syncthreads();
  for (int k = 0; k < 32; k += 8)
    if (c0 + ty + k < cols && r0 + tx < rows) y[int64_t(c0 + ty + k) * rows + r0 + tx] = tile[tx][ty + k];
}

__device__ __forceinline__ uint32_t Smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 128 threads, one 32x32 tile per block. Both tiles use the 128-byte swizzle the tensor maps declare:
// 16-byte chunk j of row r lives at chunk j ^ (r % 8).
__global__ void __launch_bounds__(128) Tma(const __grid_constant__ CUtensorMap in_map,
                                            const __grid_constant__ CUtensorMap out_map) {
  __shared__ __align__(1024) float in_tile[32 * 32];
  __shared__ __align__(1024) float out_tile[32 * 32];
  __shared__ __align__(8) uint64_t bar;
  const int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32, t = threadIdx.x;
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(Smem(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (t == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(Smem(&bar)), "r"(4096) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
        ::"r"(Smem(in_tile)), "l"(&in_map), "r"(c0), "r"(r0), "r"(Smem(&bar)) : "memory");
  }
  uint32_t done = 0;
  while (!done) {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(Smem(&bar)) : "memory");
  }
  // Lane = input row r; each thread reads two 16-byte chunks of its row and scatters them down a column.
  const int r = t & 31;
#pragma unroll
  for (int it = 0; it < 2; ++it) {
    const int j = (t >> 5) * 2 + it;
    const float4 v = reinterpret_cast<const float4*>(in_tile)[r * 8 + (j ^ (r & 7))];
    const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int orow = 4 * j + i;  // output row = input column
      out_tile[orow * 32 + (((r >> 2) ^ (orow & 7)) << 2) + (r & 3)] = e[i];
    }
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // smem writes visible to the TMA unit
  __syncthreads();
  if (t == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"(&out_map), "r"(r0), "r"(c0), "r"(Smem(out_tile)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");  // smem must outlive the read
  }
}

__global__ void Verify(const float* x, const float* y, int rows, int cols, unsigned long long* bad) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < int64_t(rows) * cols;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / cols, c = i % cols;
    if (y[c * rows + r] != x[i]) atomicAdd(bad, 1ull);
  }
}

template <typename T>
__global__ void VerifyT(const T* x, const T* y, int rows, int cols, unsigned long long* bad) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < int64_t(rows) * cols;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / cols, c = i % cols;
    if (y[c * rows + r] != x[i]) atomicAdd(bad, 1ull);
  }
}

// ---- harness ------------------------------------------------------------------------------------
template <typename F>
float MedianMs(F&& launch, int iters = 20) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) launch();
  CHECK(cudaGetLastError());
  std::vector<float> ms;
  for (int i = 0; i < iters; ++i) {
    CHECK(cudaEventRecord(a));
    launch();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float t;
    CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

bool MakeMap(CUtensorMap* map, void* base, int rows, int cols) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) !=
          cudaSuccess || fn == nullptr)
    return false;
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)}, strides[1] = {cuuint64_t(cols) * 4};
  cuuint32_t box[2] = {32, 32}, estr[2] = {1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, base, dims, strides, box, estr,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// ---- tuning sweep: the production kernels' tile/block choices, per element size -------------
template <typename T>
struct SweepCase {
  int rows, cols;
  T *x, *y;
  unsigned long long* bad;
  int sms;
  float copy_ms;

  template <typename Launch>
  void Run(const char* name, Launch&& launch) {
    const double gb = 2.0 * double(rows) * cols * sizeof(T) / 1e9;
    CHECK(cudaMemset(y, 0, size_t(rows) * cols * sizeof(T)));
    const float ms = MedianMs(launch, 10);
    CHECK(cudaMemset(bad, 0, 8));
    VerifyT<T><<<sms * 8, 256>>>(x, y, rows, cols, bad);
    unsigned long long nbad = 0;
    CHECK(cudaMemcpy(&nbad, bad, 8, cudaMemcpyDeviceToHost));
    std::printf("  %-40s %8.3f ms %7.0f GB/s %6.1f%% of copy %s\n", name, ms, gb / (ms * 1e-3),
                100.0 * copy_ms / ms, nbad ? "WRONG" : "ok");
  }
  jk::transpose::TiledArgs Args(int tile) const {
    jk::transpose::TiledArgs a{};
    a.x = reinterpret_cast<const unsigned char*>(x);
    a.y = reinterpret_cast<unsigned char*>(y);
    a.na = cols, a.nb = rows;
    a.a.n = 1, a.a.dim[0] = cols, a.a.in[0] = 1, a.a.out[0] = rows;
    a.b.n = 1, a.b.dim[0] = rows, a.b.in[0] = cols, a.b.out[0] = 1;
    a.tiles_a = (cols + tile - 1) / tile, a.tiles_b = (rows + tile - 1) / tile, a.tiles = a.tiles_a * a.tiles_b;
    return a;
  }
  template <int kE, int kTile, int kThreads>
  void Vec() {
    char name[64];
    std::snprintf(name, sizeof name, "vec16 E=%d tile %d threads %d", kE, kTile, kThreads);
    const auto a = Args(kTile);
    Run(name, [&] { jk::transpose::TiledVec16Swizzled<kE, kTile, kThreads><<<int(a.tiles), kThreads>>>(a); });
  }
  template <int kTile, int kRows>
  void Padded() {
    char name[64];
    std::snprintf(name, sizeof name, "padded E=%d tile %d rows/thread %d", int(sizeof(T)), kTile, kRows);
    const auto a = Args(kTile);
    constexpr int kThreads = jk::transpose::PaddedTile<kTile, kRows>::kThreads;
    Run(name, [&] { jk::transpose::TiledScalarPadded<T, kTile, kRows><<<int(a.tiles), kThreads>>>(a); });
  }
};

template <typename T>
SweepCase<T> MakeCase(int rows, int cols, int sms, unsigned long long* bad) {
  SweepCase<T> c{rows, cols, nullptr, nullptr, bad, sms, 0.f};
  const size_t bytes = size_t(rows) * cols * sizeof(T);
  CHECK(cudaMalloc(&c.x, bytes));
  CHECK(cudaMalloc(&c.y, bytes));
  std::vector<uint32_t> h((bytes + 3) / 4);
  uint32_t s = 777;
  for (auto& v : h) s = s * 1664525u + 1013904223u, v = s;
  CHECK(cudaMemcpy(c.x, h.data(), bytes, cudaMemcpyHostToDevice));
  c.copy_ms = MedianMs([&] { CopyVec<<<sms * 16, 256>>>((const float4*)c.x, (float4*)c.y, int64_t(bytes / 16)); }, 10);
  std::printf("sweep: %dx%d, %d-byte elements, copy %.0f GB/s\n", rows, cols, int(sizeof(T)),
              2.0 * bytes / 1e9 / (c.copy_ms * 1e-3));
  return c;
}
template <typename T>
void FreeCase(SweepCase<T>& c) {
  CHECK(cudaFree(c.x));
  CHECK(cudaFree(c.y));
}

void Sweep(int sms) {
  unsigned long long* bad;
  CHECK(cudaMalloc(&bad, 8));
  {
    auto c = MakeCase<uint32_t>(8192, 8192, sms, bad);
    c.Vec<4, 32, 128>(); c.Vec<4, 32, 256>(); c.Vec<4, 64, 128>(); c.Vec<4, 64, 256>(); c.Vec<4, 64, 512>();
    c.Vec<4, 96, 256>();
    FreeCase(c);
  }
  {
    auto c = MakeCase<uint32_t>(4097, 1023, sms, bad);  // odd: the scalar tier (L2-resident size)
    c.Padded<32, 4>(); c.Padded<32, 8>(); c.Padded<64, 8>(); c.Padded<64, 16>();
    FreeCase(c);
  }
  {
    auto c = MakeCase<uint16_t>(16384, 16384, sms, bad);
    c.Vec<2, 64, 128>(); c.Vec<2, 64, 256>(); c.Vec<2, 128, 256>(); c.Vec<2, 128, 512>();
    FreeCase(c);
  }
  {
    auto c = MakeCase<uint8_t>(16384, 16384, sms, bad);
    c.Vec<1, 128, 64>(); c.Vec<1, 128, 128>(); c.Vec<1, 128, 256>();
    FreeCase(c);
  }
  {
    auto c = MakeCase<uint64_t>(8192, 8192, sms, bad);
    c.Vec<8, 32, 256>(); c.Vec<8, 32, 128>(); c.Vec<8, 64, 256>();
    FreeCase(c);
  }
}

int main(int argc, char** argv) {
  const int rows = argc > 2 ? std::atoi(argv[1]) : 8192, cols = argc > 2 ? std::atoi(argv[2]) : 8192;
  const int64_t n = int64_t(rows) * cols;
  const double gb = 2.0 * n * sizeof(float) / 1e9;
  float *x, *y;
  unsigned long long* bad;
  CHECK(cudaMalloc(&x, n * 4));
  CHECK(cudaMalloc(&y, n * 4));
  CHECK(cudaMalloc(&bad, 8));
  {
    std::vector<float> h(n);
    uint32_t s = 12345;
    for (auto& v : h) s = s * 1664525u + 1013904223u, v = float(int32_t(s)) * 1e-9f;
    CHECK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
  }
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::printf("transpose lab: %dx%d float32, %.1f MB moved per call\n", rows, cols, gb * 1e3);
  auto report = [&](const char* name, float ms, bool check, float copy_ms) {
    unsigned long long nbad = 0;
    if (check) {
      CHECK(cudaMemset(bad, 0, 8));
      Verify<<<sms * 8, 256>>>(x, y, rows, cols, bad);
      CHECK(cudaMemcpy(&nbad, bad, 8, cudaMemcpyDeviceToHost));
    }
    std::printf("%-28s %8.3f ms %8.0f GB/s %6.1f%% of copy %s\n", name, ms, gb / (ms * 1e-3),
                copy_ms > 0 ? 100.0 * copy_ms / ms : 100.0, check ? (nbad ? "WRONG" : "ok") : "");
    CHECK(cudaMemset(y, 0, n * 4));
  };
  const dim3 tile_grid((cols + 31) / 32, (rows + 31) / 32), tile_block(32, 8);
  const float copy_ms = MedianMs([&] { CopyVec<<<sms * 16, 256>>>((const float4*)x, (float4*)y, n / 4); });
  report("0 copy (float4 kernel)", copy_ms, false, copy_ms);
  report("0 copy (cudaMemcpy D2D)", MedianMs([&] { cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice); }),
         false, copy_ms);
  report("1 naive", MedianMs([&] { Naive<<<tile_grid, tile_block>>>(x, y, rows, cols); }), true, copy_ms);
  report("2 smem tile 32x32", MedianMs([&] { SmemTile<0><<<tile_grid, tile_block>>>(x, y, rows, cols); }), true,
         copy_ms);
  report("3 padded tile 32x33", MedianMs([&] { SmemTile<1><<<tile_grid, tile_block>>>(x, y, rows, cols); }),
         true, copy_ms);
  {
    using namespace jk::transpose;
    TiledArgs a{};
    a.x = reinterpret_cast<const unsigned char*>(x);
    a.y = reinterpret_cast<unsigned char*>(y);
    a.na = cols, a.nb = rows;
    a.a.n = 1, a.a.dim[0] = cols, a.a.in[0] = 1, a.a.out[0] = rows;
    a.b.n = 1, a.b.dim[0] = rows, a.b.in[0] = cols, a.b.out[0] = 1;
    const bool vec = rows % 4 == 0 && cols % 4 == 0;
    const int t = vec ? VecTile<4>::kTile : 32;
    a.tiles_a = (cols + t - 1) / t, a.tiles_b = (rows + t - 1) / t, a.tiles = a.tiles_a * a.tiles_b;
    report("3' kTiledScalarPadded", MedianMs([&] {
             TiledArgs s = a;
             constexpr int kT = PaddedTile<>::kTile;  // the kernel's tile (64), not 32: a grid of 32x32
             s.tiles_a = (cols + kT - 1) / kT, s.tiles_b = (rows + kT - 1) / kT, s.tiles = s.tiles_a * s.tiles_b;
             TiledScalarPadded<uint32_t><<<int(s.tiles), PaddedTile<>::kThreads>>>(s);
           }),
           true, copy_ms);
    if (vec)
      report("4 vec16 swizzled 64x64", MedianMs([&] { TiledVec16Swizzled<4><<<int(a.tiles), 256>>>(a); }), true,
             copy_ms);
  }
  // The sweep first (its own buffers), TMA last: a fault there must not cost the other numbers.
  if (!(argc > 3 || argc == 2)) Sweep(sms);  // "lab rows cols nosweep" or "lab nosweep": skip it
  CUtensorMap in_map, out_map;
  if (MakeMap(&in_map, x, rows, cols) && MakeMap(&out_map, y, cols, rows)) {
    report("5 tma 32x32 swizzle128", MedianMs([&] { Tma<<<tile_grid, 128>>>(in_map, out_map); }), true, copy_ms);
  } else {
    std::printf("5 tma: cuTensorMapEncodeTiled unavailable\n");
  }
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  return 0;
}
