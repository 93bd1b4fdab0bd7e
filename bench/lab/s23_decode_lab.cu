// Lab (session 23): is SkinnyPipe's stream slow because of its own geometry? XLA's decode gemm (bench/lab/s23_h200.md
// calls 1 and 7) is a Triton split-K kernel: 8 ranks of 512 k-rows on grid rows, 256 CTAs of 128 threads, output
// tiles of 128 columns, 64-row k-tiles through a 3-stage ring, float32 partials to a workspace, then a reduction
// kernel; it streams the L2-resident b at 5.5 TB/s (6.1 us at 8x4096x4096) where SkinnyPipe runs ~3.3 TB/s. Here
// SplitPipeKernel takes that geometry with SkinnyPipe's own copies and math (cp.async 16-byte copies, ldmatrix +
// mma.sync m16n8k16, padded rows), parameterised (CW columns, warps, stages, KS k-rows a stage, S ranks), against
// the shipped SkinnyPipe (clusters of 2) and a plain read of b.
//   nvcc -std=c++17 -O3 -arch=sm_90a --expt-relaxed-constexpr -cudart static -I cuda -I bench/lab \
//        bench/lab/s23_decode_lab.cu cuda/common/sm90.cu -o build/s23_decode_lab
//   CASES="m,n,k;..." VARIANTS="pipe|x128w4s3k64r8|read264|..." build/s23_decode_lab
// xCWwWsSkKSrR: SplitPipe with CW columns, W warps, S stages, KS k-rows a stage, R ranks (+ the reduction kernel).
// Timing: each variant's launches back to back (L2-warm, as the benchmark's repeated calls), 30 calls; ONCE=1 runs
// each variant 20 times untimed for Nsight Compute's gpu__time_duration (one pass, no replay: L2 stays warm).
#include <cuda.h>
#include <cuda_bf16.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "lab_common.cuh"
#include "common/launch.h"
#include "matmul/matmul_decode.cuh"

using namespace jk;
using lab::ReadB;
using lab::Split;

template <int CW, int kWarps, int kStages, int KS, bool kSwizzle = false>
struct SplitShape {
  static constexpr int kThreads = 32 * kWarps;
  // Padded rows (elements), or with kSwizzle dense rows of b whose 16-byte chunk c of row r sits at c ^ (r % 8).
  static constexpr int kBRow = kSwizzle ? CW : CW + 8, kARow = KS + 8;
  static constexpr int kBElems = KS * kBRow;
  static constexpr int kStageElems = kBElems + 8 * kARow;
  static constexpr int kSmemBytes = kStages * kStageElems * 2;
  static constexpr int kColTiles = CW / 16, kKSteps = KS / 16;
  static constexpr int kWarpCols = kColTiles < kWarps ? kColTiles : kWarps;
  static constexpr int kKGroups = kWarps / kWarpCols;
  static constexpr int kTilesPerWarp = kColTiles / kWarpCols, kStepsPerWarp = kKSteps / kKGroups;
  static constexpr int kChunksPerRow = CW / 8, kRowsPerRound = kThreads / kChunksPerRow;
  static constexpr int kBRounds = KS / kRowsPerRound;
  static_assert(kBRounds * kRowsPerRound == KS && KS <= kThreads, "whole rounds of b, one a chunk a thread at most");
  static_assert(kStepsPerWarp >= 1 && kKSteps % kKGroups == 0, "every warp has a k step");
};

// M <= 8, N % CW == 0, every rank's k range a multiple of KS (the lab's cases). Partials: ws[(rank * kKGroups + kg)
// * 8 * n + row * n + col].
// kLate: Triton's order (the SASS of XLA's kernel, s23 call 9): wait, barrier, math, barrier, then the next copies.
template <int CW, int kWarps, int kStages, int KS, bool kSwizzle = false, bool kLate = false>
__global__ void __launch_bounds__(32 * kWarps)
    SplitPipeKernel(const uint16_t* a, const uint16_t* b, float* ws, int m, int n, int k, int k_rank) {
  using S = SplitShape<CW, kWarps, kStages, KS, kSwizzle>;
  static_assert(!kSwizzle || CW >= 64, "whole groups of 8 chunks a row");
  extern __shared__ __align__(16) uint16_t smem[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int n0 = blockIdx.x * CW, rank = blockIdx.y, kbeg = rank * k_rank;
  const int ntiles = k_rank / KS;
  const uint32_t base = SmemAddress(smem);
  const int wc = warp % S::kWarpCols, kg = warp / S::kWarpCols;
  const int q = lane / 8, r8 = lane % 8;
  const uint32_t a_frag_off = static_cast<uint32_t>(((8 * (q >> 1) + r8) * S::kBRow + 8 * (q & 1)) * 2);
  const uint32_t b_frag_off = static_cast<uint32_t>((S::kBElems + r8 * S::kARow + 8 * (q & 1)) * 2);
  const int br0 = threadIdx.x / S::kChunksPerRow, bc8 = threadIdx.x % S::kChunksPerRow;
  // kSwizzle: a thread's rows br0 + j kRowsPerRound keep br0 % 8 (kRowsPerRound is a multiple of 8).
  static_assert(!kSwizzle || S::kRowsPerRound % 8 == 0, "the swizzle is fixed across a thread's rows");
  const int bchunk = kSwizzle ? bc8 ^ (br0 % 8) : bc8;
  const uint32_t b_dst = static_cast<uint32_t>((br0 * S::kBRow + 8 * bchunk) * 2);
  const uint16_t* bsrc = b + static_cast<int64_t>(kbeg + br0) * n + n0 + 8 * bc8;
  const int64_t b_round = int64_t{S::kRowsPerRound} * n, b_tile = int64_t{KS} * n;
  const bool a_has = static_cast<int>(threadIdx.x) < KS;  // 8 rows x KS / 8 chunks
  const int ar = threadIdx.x / (KS / 8), ac8 = threadIdx.x % (KS / 8);
  const bool a_ok = a_has && ar < m;
  const uint32_t a_dst = static_cast<uint32_t>((S::kBElems + ar * S::kARow + 8 * ac8) * 2);
  const uint16_t* asrc = a + (a_ok ? static_cast<int64_t>(ar) * k + kbeg + 8 * ac8 : 0);
  auto load = [&](int tile, int slot) {
    const uint32_t sb = base + static_cast<uint32_t>(slot * S::kStageElems * 2);
    const uint16_t* bt = bsrc + tile * b_tile;
#pragma unroll
    for (int j = 0; j < S::kBRounds; ++j)
      mm::pipe::Copy16(sb + b_dst + static_cast<uint32_t>(j * S::kRowsPerRound * S::kBRow * 2), bt + j * b_round, true);
    if (a_has) mm::pipe::Copy16(sb + a_dst, a_ok ? asrc + tile * KS : a, a_ok);
  };
  float acc[S::kTilesPerWarp][4] = {};
  auto compute = [&](int slot) {
    const uint32_t sb = base + static_cast<uint32_t>(slot * S::kStageElems * 2);
#pragma unroll
    for (int s = 0; s < S::kStepsPerWarp; ++s) {
      const int kk = (kg * S::kStepsPerWarp + s) * 16;
      uint32_t fb0, fb1;
      mm::pipe::Ld2(fb0, fb1, sb + b_frag_off + static_cast<uint32_t>(kk * 2));
#pragma unroll
      for (int j = 0; j < S::kTilesPerWarp; ++j) {
        const int col = (wc + S::kWarpCols * j) * 16;
        uint32_t fa[4];
        if constexpr (kSwizzle) {  // lane: row kk + 8 (q >> 1) + r8, chunk col / 8 + (q & 1), swizzled by r8
          const uint32_t row = static_cast<uint32_t>(kk + 8 * (q >> 1) + r8);
          const uint32_t chunk = static_cast<uint32_t>((col / 8 + (q & 1)) ^ r8);
          mm::pipe::LdTrans4(fa, sb + (row * S::kBRow + chunk * 8) * 2);
        } else {
          mm::pipe::LdTrans4(fa, sb + a_frag_off + static_cast<uint32_t>((kk * S::kBRow + col) * 2));
        }
        mm::SkinnyMmaOp<__nv_bfloat16>(acc[j], fa, fb0, fb1);
      }
    }
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ntiles) load(s, s);
    mm::pipe::Commit();
  }
  for (int i = 0; i < ntiles; ++i) {
    mm::pipe::Wait<kStages - 2>();
    __syncthreads();
    const int next = i + kStages - 1;
    if constexpr (kLate) {
      compute(i % kStages);
      __syncthreads();
    }
    if (next < ntiles) load(next, next % kStages);
    mm::pipe::Commit();
    if constexpr (!kLate) compute(i % kStages);
  }
  float* part = ws + static_cast<int64_t>(rank * S::kKGroups + kg) * 8 * n;
#pragma unroll
  for (int j = 0; j < S::kTilesPerWarp; ++j) {
    const int col = n0 + (wc + S::kWarpCols * j) * 16 + g;
    part[(2 * t) * n + col] = acc[j][0];
    part[(2 * t + 1) * n + col] = acc[j][1];
    part[(2 * t) * n + col + 8] = acc[j][2];
    part[(2 * t + 1) * n + col + 8] = acc[j][3];
  }
}

// out[r][c] = bf16(sum of the `parts` partials), 4 columns a thread.
__global__ void SplitSumKernel(const float* ws, __nv_bfloat16* out, int m, int n, int parts) {
  const int64_t e = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  if (e >= static_cast<int64_t>(m) * n) return;
  float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int p = 0; p < parts; ++p) {
    const float4 v = __ldcg(reinterpret_cast<const float4*>(ws + static_cast<int64_t>(p) * 8 * n + e));
    s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
  }
  out[e] = __float2bfloat16(s.x);
  out[e + 1] = __float2bfloat16(s.y);
  out[e + 2] = __float2bfloat16(s.z);
  out[e + 3] = __float2bfloat16(s.w);
}

using Launch = std::function<cudaError_t()>;

template <int CW, int W, int ST, int KS, bool kSwz = false, bool kLate = false>
Launch MakeSplit(const uint16_t* a, const uint16_t* b, float* ws, void* out, int m, int n, int k, int ranks) {
  using S = SplitShape<CW, W, ST, KS, kSwz>;
  auto kernel = SplitPipeKernel<CW, W, ST, KS, kSwz, kLate>;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, S::kSmemBytes));
  const int k_rank = k / ranks;
  const int parts = ranks * S::kKGroups;
  return [=] {
    kernel<<<dim3(n / CW, ranks), S::kThreads, S::kSmemBytes>>>(a, b, ws, m, n, k, k_rank);
    SplitSumKernel<<<(m * n / 4 + 255) / 256, 256>>>(ws, static_cast<__nv_bfloat16*>(out), m, n, parts);
    return cudaGetLastError();
  };
}

Launch MakeVariant(const std::string& v, const uint16_t* a, const uint16_t* b, float* ws, void* out, int m, int n,
                   int k, int ranks) {
  // The geometries measured (each an instantiation).
  if (v == "x128w4s3k64") return MakeSplit<128, 4, 3, 64>(a, b, ws, out, m, n, k, ranks);   // XLA's
  if (v == "x128w4s4k64") return MakeSplit<128, 4, 4, 64>(a, b, ws, out, m, n, k, ranks);
  if (v == "x128w8s3k64") return MakeSplit<128, 8, 3, 64>(a, b, ws, out, m, n, k, ranks);
  if (v == "x64w4s3k128") return MakeSplit<64, 4, 3, 128>(a, b, ws, out, m, n, k, ranks);
  if (v == "x64w8s4k128") return MakeSplit<64, 8, 4, 128>(a, b, ws, out, m, n, k, ranks);  // SkinnyPipe's stage
  if (v == "x128w4s3k32") return MakeSplit<128, 4, 3, 32>(a, b, ws, out, m, n, k, ranks);
  if (v == "x256w8s3k32") return MakeSplit<256, 8, 3, 32>(a, b, ws, out, m, n, k, ranks);
  // Call 10: the swizzled layout (z), Triton's order (l), both.
  if (v == "x128w4s3k32z") return MakeSplit<128, 4, 3, 32, true>(a, b, ws, out, m, n, k, ranks);
  if (v == "x128w4s3k32l") return MakeSplit<128, 4, 3, 32, false, true>(a, b, ws, out, m, n, k, ranks);
  if (v == "x128w4s3k32zl") return MakeSplit<128, 4, 3, 32, true, true>(a, b, ws, out, m, n, k, ranks);
  if (v == "x128w4s4k32z") return MakeSplit<128, 4, 4, 32, true>(a, b, ws, out, m, n, k, ranks);
  if (v == "x128w4s3k64z") return MakeSplit<128, 4, 3, 64, true>(a, b, ws, out, m, n, k, ranks);
  return nullptr;
}

int main() {
  const char* cs = std::getenv("CASES");
  const char* vs = std::getenv("VARIANTS");
  const bool once = std::getenv("ONCE") != nullptr;
  const std::vector<std::string> variants =
      Split(vs ? vs : "pipe|read264|x128w4s3k64r8|x128w4s3k64r4|x64w8s4k128r2", '|');
  for (const std::string& cstr : Split(cs ? cs : "8,4096,4096", ';')) {
    const std::vector<std::string> f = Split(cstr, ',');
    const int m = atoi(f[0].c_str()), n = atoi(f[1].c_str()), k = atoi(f[2].c_str());
    const lab::Bf16Matmul mm_case(m, n, k);
    void *a, *b, *out;
    float* ws;
    unsigned* sink;
    CHECK(cudaMalloc(&ws, int64_t{64} * 8 * n * 4));
    CHECK(cudaMalloc(&sink, 4));
    MatmulProblem p = mm_case.Upload(&a, &b, &out);
    std::printf("case %s\n", cstr.c_str());
    constexpr int CW = 64;
    using PS = mm::PipeShape<CW, 1>;
    const int64_t ks = 8192 / CW;
    // SkinnyPipe: padded b stages in calls 8-10, swizzled since (the padded form is gone from the source).
    auto pipe_kernel = mm::SkinnyPipeKernel<__nv_bfloat16, CW, 1>;
    CHECK(cudaFuncSetAttribute(pipe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, PS::kSmemBytes));
    CUtensorMap map_b;
    std::memset(&map_b, 0, sizeof(map_b));
    for (const std::string& v : variants) {
      Launch run;
      if (v.rfind("read", 0) == 0) {
        const int grid = atoi(v.c_str() + 4);
        run = [=] {
          ReadB<<<grid, 256>>>(static_cast<const uint4*>(b), int64_t{k} * n * 2 / 16, sink);
          return cudaGetLastError();
        };
      } else if (v == "pipe") {  // the shipped tier at 8x4096x4096: clusters of 2
        const int cluster = 2;
        const int64_t k_rank = ((k + cluster - 1) / cluster + ks - 1) / ks * ks;
        run = [=, &map_b] {
          ClusterLaunch lc(dim3(static_cast<unsigned>((n + CW - 1) / CW * cluster), 1, 1), dim3(mm::kPipeThreads), 0,
                           cluster);
          lc.cfg.dynamicSmemBytes = PS::kSmemBytes;
          return cudaLaunchKernelEx(&lc.cfg, pipe_kernel, map_b, p, cluster, k_rank);
        };
      } else {
        const size_t r = v.rfind('r');
        const int ranks = atoi(v.c_str() + r + 1);
        run = MakeVariant(v.substr(0, r), static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b), ws, out,
                          m, n, k, ranks);
        if (!run) {
          std::printf("  %s: unknown variant\n", v.c_str());
          continue;
        }
      }
      CHECK(cudaMemset(out, 0, int64_t{m} * n * 2));
      if (once) {
        for (int i = 0; i < 20; ++i) CHECK(run());
        CHECK(cudaDeviceSynchronize());
        std::printf("  %s: ran 20 times\n", v.c_str());
        continue;
      }
      cudaEvent_t e0, e1;
      CHECK(cudaEventCreate(&e0));
      CHECK(cudaEventCreate(&e1));
      for (int i = 0; i < 5; ++i) CHECK(run());
      CHECK(cudaEventRecord(e0));
      for (int i = 0; i < 30; ++i) CHECK(run());
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float ms = 0.f;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      const double err = v.rfind("read", 0) != 0 ? mm_case.MaxRelErr(out) : 0.0;
      std::printf("  %-14s 30 back-to-back %6.2f us/call   max rel err %.1e\n", v.c_str(), ms * 1000.f / 30.f, err);
    }
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(out));
    CHECK(cudaFree(ws));
  }
  return 0;
}
