// Lab (session 18): LayerNorm / RMSNorm tiers side by side at one shape, without JAX.
// Links the norm launchers (cuda/norm/*.cu, cuda/common/sm90.cu) and drives them through the public
// LaunchLayerNorm / LaunchRmsNorm with JK_NORM_TIER re-read at every launch (JK_NORM_TIER_DYNAMIC=1).
//   nvcc -std=c++17 -O3 -arch=sm_90a --expt-relaxed-constexpr -cudart static -I cuda \
//        bench/lab/s18_norm_lab.cu cuda/norm/*.cu cuda/common/sm90.cu -o build/s18_norm_lab
//   build/s18_norm_lab            (cases from CASES: "op dtype rows cols;..." and VARIANTS: "tier|tier|...";
//                                 a variant may join "noscale", "nobias" and "E:NAME=VALUE" parts with '+')
// Per variant: cudaEvent time of one launch after an L2 flush (a read of 256 MB), median of 15 after 3
// warm-ups; a diagnostic for choosing between tiers, not a benchmark figure (bench/ has those). The copy
// line is a float4 read-and-scale over the same bytes. Outputs are compared with the first variant's.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lab_common.cuh"
#include "norm/norm_launch.h"

using namespace jk;
using lab::CopyScale;
using lab::Split;
using lab::TimeMedian;

__device__ float Hash01(int64_t i, uint32_t seed) {
  uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed ^ static_cast<uint32_t>(i >> 32) * 40503u;
  h ^= h >> 16; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
  return static_cast<float>(h) / 4294967296.f;
}
template <typename T>
__global__ void Fill(T* x, int64_t n, uint32_t seed, float offset, float scale) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    // Roughly normal (sum of 3 uniforms), plus an offset so LayerNorm's shift matters.
    const float u = Hash01(i, seed) + Hash01(i, seed * 7 + 1) + Hash01(i, seed * 13 + 5) - 1.5f;
    x[i] = static_cast<T>(offset + scale * u * 2.f);
  }
}
template <typename T>
__global__ void ToFloatK(const T* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = static_cast<float>(x[i]);
}
struct Case { std::string op, dtype; int64_t rows, cols; };

template <typename T>
void RunCase(const Case& c, const std::vector<std::string>& variants, DType dt) {
  const int64_t n = c.rows * c.cols;
  T *x, *g, *b, *y;
  float *yf, *ref;
  CHECK(cudaMalloc(&x, n * sizeof(T)));
  CHECK(cudaMalloc(&y, n * sizeof(T)));
  CHECK(cudaMalloc(&g, c.cols * sizeof(T)));
  CHECK(cudaMalloc(&b, c.cols * sizeof(T)));
  CHECK(cudaMalloc(&yf, n * sizeof(float)));
  CHECK(cudaMalloc(&ref, n * sizeof(float)));
  Fill<T><<<1024, 256>>>(x, n, 1, 3.f, 1.f);
  Fill<T><<<64, 256>>>(g, c.cols, 2, 1.f, 0.5f);
  Fill<T><<<64, 256>>>(b, c.cols, 3, 0.f, 0.5f);
  CHECK(cudaDeviceSynchronize());
  const bool ln = c.op == "layer_norm";
  NormShape s;
  s.outer = c.rows;
  s.n = c.cols;
  const double bytes = 2.0 * n * sizeof(T);
  // The copy ceiling over the same bytes.
  const int64_t n4 = static_cast<int64_t>(bytes / 2 / 16);
  const float copy_us = TimeMedian([&] {
    CopyScale<<<132 * 8, 512>>>(reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), n4);
    return cudaGetLastError();
  }, true);
  std::printf("%s %s %lldx%lld  %.1f MB  copy %.2f us (%.0f GB/s)\n", c.op.c_str(), c.dtype.c_str(),
              (long long)c.rows, (long long)c.cols, bytes / 1e6, copy_us, bytes / copy_us / 1e3);
  for (size_t v = 0; v < variants.size(); ++v) {
    // A variant is '+'-joined parts (session 19): "noscale" / "nobias" (that parameter absent), "E:NAME=VALUE"
    // (an environment variable for this variant), anything else the JK_NORM_TIER value ("default": unset).
    std::string tier;
    bool no_scale = false, no_bias = false;
    std::vector<std::string> envs;
    for (const std::string& part : Split(variants[v], '+')) {
      if (part == "noscale") no_scale = true;
      else if (part == "nobias") no_bias = true;
      else if (part.rfind("E:", 0) == 0 && part.find('=') != std::string::npos) {
        const size_t eq = part.find('=');
        envs.push_back(part.substr(2, eq - 2));
        setenv(envs.back().c_str(), part.substr(eq + 1).c_str(), 1);
      } else if (part != "default") tier = part;
    }
    if (tier.empty()) unsetenv("JK_NORM_TIER");
    else setenv("JK_NORM_TIER", tier.c_str(), 1);
    T* const gp = no_scale ? nullptr : g;
    T* const bp = no_bias ? nullptr : b;
    auto launch = [&] {
      return ln ? LaunchLayerNorm(0, dt, x, gp, bp, y, nullptr, nullptr, s, 1e-5f)
                : LaunchRmsNorm(0, dt, x, gp, y, s, 1e-6f);
    };
    const float us = TimeMedian(launch, true);
    ToFloatK<T><<<1024, 256>>>(y, yf, n);
    CHECK(cudaDeviceSynchronize());
    double maxdiff = 0;
    if (v == 0) {
      CHECK(cudaMemcpy(ref, yf, n * sizeof(float), cudaMemcpyDeviceToDevice));
    } else {
      std::vector<float> a(std::min<int64_t>(n, int64_t{1} << 24)), r(a.size());
      CHECK(cudaMemcpy(a.data(), yf, a.size() * 4, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(r.data(), ref, r.size() * 4, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < a.size(); ++i) maxdiff = std::max(maxdiff, (double)std::fabs(a[i] - r[i]));
    }
    std::printf("  %-22s %9.2f us  %5.1f%% of copy  %6.0f GB/s  maxdiff vs first %.3g\n", variants[v].c_str(), us,
                100.0 * copy_us / us, bytes / us / 1e3, maxdiff);
    for (const std::string& e : envs) unsetenv(e.c_str());
  }
  unsetenv("JK_NORM_TIER");
  CHECK(cudaFree(x)); CHECK(cudaFree(y)); CHECK(cudaFree(g)); CHECK(cudaFree(b));
  CHECK(cudaFree(yf)); CHECK(cudaFree(ref));
}

int main() {
  setenv("JK_NORM_TIER_DYNAMIC", "1", 1);
  const char* cs = std::getenv("CASES");
  const char* vs = std::getenv("VARIANTS");
  const std::string cases = cs ? cs : "layer_norm bfloat16 49152 512;rms_norm bfloat16 49152 512";
  const std::vector<std::string> variants = Split(vs ? vs : "default|packed 2|packed 4", '|');
  for (const std::string& cstr : Split(cases, ';')) {
    char op[32], dt[32];
    long long r, k;
    if (std::sscanf(cstr.c_str(), "%31s %31s %lld %lld", op, dt, &r, &k) != 4) continue;
    const Case c{op, dt, r, k};
    if (c.dtype == "float32") RunCase<float>(c, variants, DType::kF32);
    else if (c.dtype == "bfloat16") RunCase<__nv_bfloat16>(c, variants, DType::kBF16);
    else RunCase<__half>(c, variants, DType::kF16);
  }
  return 0;
}
