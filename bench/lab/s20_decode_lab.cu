// Lab (session 20): decode matmul (bf16 M x N x K, M <= 16) as split-K without a cluster, XLA's structure:
// SkinnyPipeKernel's ranks on grid rows write float32 partial sums to a workspace, SplitReduceKernel adds them
// and applies the epilogue. Against the shipped geometry (SkinnyPipe in clusters of 2, partials through
// distributed shared memory) and a plain read of b (the stream's ceiling). Builds only with
// bench/lab/s20_decode_splitk.patch applied (SkinnyPipeKernel's `partials` argument and SplitReduceKernel; lost,
// not kept: bench/lab/s20_h200.md, call 1), and the patch applies to the tree of commit df8df82 (session 20), not to
// today's matmul files (session 37 checked): `git worktree add /tmp/s20 df8df82`, apply it there, build there.
//   nvcc -std=c++17 -O3 -arch=sm_90a --expt-relaxed-constexpr -cudart static -I cuda -I bench/lab \
//        bench/lab/s20_decode_lab.cu cuda/common/sm90.cu -o build/s20_decode_lab
//   CASES="m,n,k;..." VARIANTS="pipe|split4|read..." build/s20_decode_lab
// Variants: pipe (cluster 2, the launcher's choice at 8x4096x4096), pipeC (cluster C), splitS (S ranks on grid
// rows, no cluster, + the reduction), readG (G CTAs x 256 threads reading b once with 16-byte loads).
// Timing: L2-warm (b stays in the 50 MB L2 between calls, as in the benchmark's repeated calls). Two figures per
// variant: cudaEvent median of one call (both kernels for split), and 50 calls back to back / 50.
// ONCE=1: each variant 5 times, no timing (for Nsight Compute's gpu__time_duration per kernel).
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
using lab::TimeMedian;

int main() {
  const char* cs = std::getenv("CASES");
  const char* vs = std::getenv("VARIANTS");
  const bool once = std::getenv("ONCE") != nullptr;
  const std::vector<std::string> variants = Split(vs ? vs : "pipe|split2|split4|split8|read132|read264|read528", '|');
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (const std::string& cstr : Split(cs ? cs : "8,4096,4096", ';')) {
    const std::vector<std::string> f = Split(cstr, ',');
    const int64_t m = atoll(f[0].c_str()), n = atoll(f[1].c_str()), k = atoll(f[2].c_str());
    const lab::Bf16Matmul mm_case(m, n, k);
    void *a, *b, *out;
    float* ws;
    unsigned* sink;
    CHECK(cudaMalloc(&ws, 16 * m * n * 4));
    CHECK(cudaMalloc(&sink, 4));
    MatmulProblem p = mm_case.Upload(&a, &b, &out);
    constexpr int CW = 64;
    using S = mm::PipeShape<CW, 1>;
    const int64_t ks = 8192 / CW;
    auto kernel = mm::SkinnyPipeKernel<__nv_bfloat16, CW, 1>;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, S::kSmemBytes));
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, mm::kPipeThreads, S::kSmemBytes));
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, kernel));
    std::printf("case %s: SkinnyPipe<64,1> %d regs, %d B smem, %d CTAs/SM\n", cstr.c_str(), fa.numRegs,
                S::kSmemBytes, per_sm);
    CUtensorMap map_b;
    std::memset(&map_b, 0, sizeof(map_b));
    const int64_t col_blocks = (n + CW - 1) / CW;
    for (const std::string& v : variants) {
      std::function<cudaError_t()> run;
      if (v.rfind("read", 0) == 0) {
        const int g = atoi(v.c_str() + 4);
        run = [=] {
          ReadB<<<g, 256>>>(static_cast<const uint4*>(b), k * n * 2 / 16, sink);
          return cudaGetLastError();
        };
      } else if (v.rfind("pipe", 0) == 0) {
        const int cluster = v.size() > 4 ? atoi(v.c_str() + 4) : 2;
        const int64_t k_rank = ((k + cluster - 1) / cluster + ks - 1) / ks * ks;
        run = [=, &map_b] {
          ClusterLaunch lc(dim3(static_cast<unsigned>(col_blocks * cluster), 1, 1), dim3(mm::kPipeThreads), 0, cluster);
          lc.cfg.dynamicSmemBytes = S::kSmemBytes;
          return cudaLaunchKernelEx(&lc.cfg, kernel, map_b, p, cluster, k_rank, static_cast<float*>(nullptr));
        };
      } else if (v.rfind("split", 0) == 0) {
        const int splits = atoi(v.c_str() + 5);
        const int64_t k_rank = ((k + splits - 1) / splits + ks - 1) / ks * ks;
        const int64_t quads = m * n / 4;
        const int rgrid = static_cast<int>(std::min<int64_t>((quads + 255) / 256, 4 * sms));
        run = [=, &map_b] {
          ClusterLaunch lc(dim3(static_cast<unsigned>(col_blocks), static_cast<unsigned>(splits), 1),
                           dim3(mm::kPipeThreads), 0, 1);
          lc.cfg.dynamicSmemBytes = S::kSmemBytes;
          cudaError_t e = cudaLaunchKernelEx(&lc.cfg, kernel, map_b, p, 1, k_rank, ws);
          if (e != cudaSuccess) return e;
          mm::SplitReduceKernel<__nv_bfloat16><<<rgrid, 256>>>(p, ws, splits);
          return cudaGetLastError();
        };
      } else {
        std::printf("  %s: unknown variant\n", v.c_str());
        continue;
      }
      CHECK(cudaMemset(out, 0, m * n * 2));
      if (once) {
        for (int i = 0; i < 5; ++i) CHECK(run());
        CHECK(cudaDeviceSynchronize());
        std::printf("  %s: ran 5 times\n", v.c_str());
        continue;
      }
      const float us = TimeMedian(run, false, 41);
      // 50 calls back to back on one stream between two events: the launch gaps overlap the kernels.
      cudaEvent_t e0, e1;
      CHECK(cudaEventCreate(&e0));
      CHECK(cudaEventCreate(&e1));
      for (int i = 0; i < 5; ++i) CHECK(run());
      CHECK(cudaEventRecord(e0));
      for (int i = 0; i < 50; ++i) CHECK(run());
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float many_us = 0.f;
      CHECK(cudaEventElapsedTime(&many_us, e0, e1));
      many_us *= 1000.f / 50.f;
      const double err = v.rfind("read", 0) != 0 ? mm_case.MaxRelErr(out) : 0.0;
      std::printf("  %-8s one call %6.2f us   50 back-to-back %6.2f us/call   b at %.2f TB/s   max rel err %.1e\n",
                  v.c_str(), us, many_us, k * n * 2 / (us * 1e6), err);
    }
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(out));
    CHECK(cudaFree(ws));
  }
  return 0;
}
