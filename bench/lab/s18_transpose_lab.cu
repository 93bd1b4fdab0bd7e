// Lab (session 18): transpose tiers side by side, without JAX. Links the transpose launcher and drives it
// through PlanTranspose + LaunchTranspose with JK_TRANSPOSE_TIERS (re-read at every launch).
//   nvcc -std=c++17 -O3 -arch=sm_90a --expt-relaxed-constexpr -cudart static -I cuda \
//        bench/lab/s18_transpose_lab.cu cuda/transpose/transpose_launch.cu cuda/common/sm90.cu -o build/s18_transpose_lab
//   CASES="rows x cols bytes perm;..." VARIANTS="default|g16|..." build/s18_transpose_lab
// A case is "d0,d1,... e p0,p1,..." (dims, element bytes, permutation). Per variant: cudaEvent time of one
// launch after an L2 flush (a read of 256 MB) or without one ("warm" cases: the previous launch's data
// left in L2, as the benchmark's repeated calls do), median of 21 after 3 warm-ups. A diagnostic for
// choosing between tiers, not a benchmark figure. Outputs are compared with the first variant's, bit for bit.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lab_common.cuh"
#include "transpose/transpose_launch.h"

using namespace jk;
using lab::CopyScale;
using lab::Split;
using lab::TimeMedian;

__global__ void FillBytes(uint32_t* x, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u;
    h ^= h >> 16; h *= 2246822519u; h ^= h >> 13;
    x[i] = h;
  }
}
int main() {
  const char* cs = std::getenv("CASES");
  const char* vs = std::getenv("VARIANTS");
  const std::string cases = cs ? cs : "2048,512 4 1,0;2048,512 1 1,0";
  const std::vector<std::string> variants = Split(vs ? vs : "default|reg64|t128", '|');
  for (const std::string& cstr : Split(cases, ';')) {
    const std::vector<std::string> f = Split(cstr, ' ');
    if (f.size() < 3) continue;
    const bool warm = f.size() > 3 && f[3] == "warm";
    std::vector<int64_t> dims, perm;
    for (const auto& d : Split(f[0], ',')) dims.push_back(atoll(d.c_str()));
    for (const auto& d : Split(f[2], ',')) perm.push_back(atoll(d.c_str()));
    const int e = atoi(f[1].c_str());
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    const int64_t bytes = n * e;
    unsigned char *x, *y, *ref;
    CHECK(cudaMalloc(&x, bytes + 16));
    CHECK(cudaMalloc(&y, bytes + 16));
    CHECK(cudaMalloc(&ref, bytes + 16));
    FillBytes<<<1024, 256>>>(reinterpret_cast<uint32_t*>(x), (bytes + 3) / 4);
    CHECK(cudaDeviceSynchronize());
    TransposePlan plan;
    if (!PlanTranspose(dims.data(), perm.data(), static_cast<int>(dims.size()), e, 16, &plan)) {
      std::printf("%s: no plan\n", cstr.c_str());
      continue;
    }
    const float copy_us = TimeMedian([&] {
      CopyScale<<<132 * 8, 512>>>(reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), bytes / 16);
      return cudaGetLastError();
    }, !warm, 21);
    std::printf("%s (%s)  %.1f MB moved  copy %.2f us (%.0f GB/s)\n", cstr.c_str(),
                plan.kind == TransposePlan::kTiled ? "tiled" : plan.kind == TransposePlan::kRowCopy ? "rowcopy" : "copy",
                2.0 * bytes / 1e6, copy_us, 2.0 * bytes / copy_us / 1e3);
    for (size_t v = 0; v < variants.size(); ++v) {
      const std::string knob = variants[v] == "default" ? "" : variants[v];
      setenv("JK_TRANSPOSE_TIERS", knob.c_str(), 1);
      CHECK(cudaMemset(y, 0, bytes));
      const float us = TimeMedian([&] { return LaunchTranspose(0, plan, x, y); }, !warm, 21);
      CHECK(cudaDeviceSynchronize());
      bool same = true;
      if (v == 0) {
        CHECK(cudaMemcpy(ref, y, bytes, cudaMemcpyDeviceToDevice));
      } else {
        std::vector<unsigned char> a(bytes), r(bytes);
        CHECK(cudaMemcpy(a.data(), y, bytes, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(r.data(), ref, bytes, cudaMemcpyDeviceToHost));
        same = std::memcmp(a.data(), r.data(), bytes) == 0;
      }
      std::printf("  %-10s %9.2f us  %5.1f%% of copy  %6.0f GB/s  %s\n", variants[v].c_str(), us, 100.0 * copy_us / us,
                  2.0 * bytes / us / 1e3, v == 0 ? "" : same ? "same" : "DIFFERENT");
    }
    unsetenv("JK_TRANSPOSE_TIERS");
    CHECK(cudaFree(x)); CHECK(cudaFree(y)); CHECK(cudaFree(ref));
  }
  return 0;
}
