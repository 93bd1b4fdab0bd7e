// Lab (session 20, call 14): does the decode stream (SkinnyPipe, bf16 M x N x K) lose its speed because every column
// block reads the same rows of b at the same time? SkinnyPipe with each column block starting its K tiles at a
// different offset (rotate), against the default, and plain 16-byte reads of b in SkinnyPipe's slices (64 columns x
// a rank's K range, 128-byte row segments 2N bytes apart) in the same two orders, against a flat read of b.
//   nvcc -std=c++17 -O3 -arch=sm_90a --expt-relaxed-constexpr -cudart static -I cuda -I bench/lab \
//        bench/lab/s20_rotate_lab.cu cuda/common/sm90.cu -o build/s20_rotate_lab
//   CASES="m,n,k;..." build/s20_rotate_lab
// L2-warm timing (b stays in L2 between calls, as in the benchmark): 50 calls back to back between two events,
// per call; outputs checked against a float64 host reference. Builds only with bench/lab/s20_rotate.patch applied
// (SkinnyPipeKernel's `rotate` argument; no effect measured, not kept: bench/lab/s20_h200.md, call 14).
#include <cuda.h>
#include <cuda_bf16.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/launch.h"
#include "lab_common.cuh"
#include "matmul/matmul_decode.cuh"

using namespace jk;
using lab::Split;

// Rank r of column block c reads rows [r * k_rank, (r + 1) * k_rank) x columns [64 c, 64 c + 64): 8 threads a row,
// 32 rows a pass of 256 threads, 4 passes in flight; tiles of 128 rows in order, or rotated by c.
__global__ void ReadSlices(const uint4* b, int64_t n, int64_t k, int64_t k_rank, int cluster, int rotate,
                           unsigned* sink) {
  const int64_t c = blockIdx.x / cluster, r = blockIdx.x % cluster;
  const int64_t k0 = r * k_rank, k1 = k0 + k_rank < k ? k0 + k_rank : k;
  const int64_t tiles = (k1 - k0 + 127) / 128, rot = rotate ? c % tiles : 0;
  const int row = threadIdx.x / 8, chunk = threadIdx.x % 8;
  unsigned acc = 0;
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t tt = t + rot < tiles ? t + rot : t + rot - tiles;
    uint4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t kk = k0 + tt * 128 + j * 32 + row;
      v[j] = kk < k1 ? __ldcg(b + (kk * n + 64 * c) / 8 + chunk) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  if (acc == 0x12345678u) *sink = acc;
}

__global__ void ReadFlat(const uint4* b, int64_t n16, unsigned* sink) {
  unsigned acc = 0;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n16; i += stride) {
    const uint4 v = __ldcg(b + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) *sink = acc;
}

int main() {
  const char* cs = std::getenv("CASES");
  for (const std::string& cstr : Split(cs ? cs : "8,4096,4096", ';')) {
    const std::vector<std::string> f = Split(cstr, ',');
    const int64_t m = atoll(f[0].c_str()), n = atoll(f[1].c_str()), k = atoll(f[2].c_str());
    const lab::Bf16Matmul mm_case(m, n, k);
    void *a, *b, *out;
    unsigned* sink;
    CHECK(cudaMalloc(&sink, 4));
    MatmulProblem p = mm_case.Upload(&a, &b, &out);
    constexpr int CW = 64;
    using S = mm::PipeShape<CW, 1>;
    const int64_t ks = 8192 / CW, col_blocks = (n + CW - 1) / CW;
    auto kernel = mm::SkinnyPipeKernel<__nv_bfloat16, CW, 1>;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, S::kSmemBytes));
    CUtensorMap map_b;
    std::memset(&map_b, 0, sizeof(map_b));
    std::printf("case %s\n", cstr.c_str());
    struct Variant {
      std::string name;
      std::function<cudaError_t()> run;
      bool checks;
    };
    std::vector<Variant> vs;
    for (int cluster : {2, 1}) {
      const int64_t k_rank = ((k + cluster - 1) / cluster + ks - 1) / ks * ks;
      for (int rot : {0, 1, 2}) {  // 2: no reduction or epilogue (the lab build of call 15)
        vs.push_back({"pipe c" + std::to_string(cluster) + (rot == 1 ? " rotated" : rot == 2 ? " no reduce" : ""), [=, &map_b] {
                        ClusterLaunch lc(dim3(static_cast<unsigned>(col_blocks * cluster)), dim3(mm::kPipeThreads), 0,
                                         cluster);
                        lc.cfg.dynamicSmemBytes = S::kSmemBytes;
                        return cudaLaunchKernelEx(&lc.cfg, kernel, map_b, p, cluster, k_rank, rot);
                      },
                      true});
        vs.push_back({"read slices c" + std::to_string(cluster) + (rot == 1 ? " rotated" : rot == 2 ? " no reduce" : ""), [=] {
                        ReadSlices<<<static_cast<unsigned>(col_blocks * cluster), 256>>>(
                            static_cast<const uint4*>(b), n, k, k_rank, cluster, rot == 1, sink);
                        return cudaGetLastError();
                      },
                      false});
      }
    }
    vs.push_back({"read flat 264x256", [=] {
                    ReadFlat<<<264, 256>>>(static_cast<const uint4*>(b), k * n / 8, sink);
                    return cudaGetLastError();
                  },
                  false});
    for (int rep = 0; rep < 2; ++rep)
      for (const Variant& v : vs) {
        CHECK(cudaMemset(out, 0, m * n * 2));
        cudaEvent_t e0, e1;
        CHECK(cudaEventCreate(&e0));
        CHECK(cudaEventCreate(&e1));
        for (int i = 0; i < 5; ++i) CHECK(v.run());
        CHECK(cudaEventRecord(e0));
        for (int i = 0; i < 50; ++i) CHECK(v.run());
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        float ms = 0.f;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        const double err = v.checks ? mm_case.MaxRelErr(out) : 0.0;
        std::printf("  %-22s %6.2f us/call (50 back to back)   max rel err %.1e\n", v.name.c_str(), ms * 1000.f / 50.f,
                    err);
      }
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(out));
  }
  return 0;
}
