// Lab (session 17): the exact float32 split-K kernel alone, for compute-sanitizer (no JAX): one launch of
// LaunchMatmul on a float32 HIGHEST problem (default 512 x 256 x 512: 64x64 tiles in pairs, two k groups a CTA,
// sanitizer run 14's flagged case), checked against a float64 host product.
//   nvcc -std=c++17 -O3 -arch=sm_90a -lineinfo --expt-relaxed-constexpr -cudart static -I cuda \
//        bench/lab/s17_split_race.cu cuda/matmul/*.cu cuda/common/sm90.cu -o build/s17_split_race
//   compute-sanitizer --tool racecheck build/s17_split_race [M N K]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "matmul/matmul_launch.h"

int main(int argc, char** argv) {
  const int64_t M = argc > 3 ? atoll(argv[1]) : 512, N = argc > 3 ? atoll(argv[2]) : 256,
                K = argc > 3 ? atoll(argv[3]) : 512;
  std::vector<float> a(M * K), b(K * N), out(M * N);
  uint32_t s = 12345;
  auto rnd = [&] { s = s * 1664525u + 1013904223u; return static_cast<float>(s >> 8) / 16777216.f - 0.5f; };
  for (auto& v : a) v = rnd();
  for (auto& v : b) v = rnd();
  float *da, *db, *dout;
  cudaMalloc(&da, a.size() * 4), cudaMalloc(&db, b.size() * 4), cudaMalloc(&dout, out.size() * 4);
  cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
  jk::MatmulProblem p;
  p.dtype = jk::DType::kF32;
  p.precision = jk::MatmulPrecision::kHighest;
  p.m = M, p.n = N, p.k = K;
  p.a = da, p.b = db, p.out = dout;
  p.a_end = da + a.size(), p.b_end = db + b.size();
  std::printf("tier %d\n", static_cast<int>(jk::ChooseMatmulTier(p)));
  cudaError_t e = jk::LaunchMatmul(nullptr, p);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("CUDA error %s\n", cudaGetErrorString(e));
    return 2;
  }
  cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost);
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < M; i += 7)
    for (int64_t j = 0; j < N; ++j) {
      double r = 0;
      for (int64_t k = 0; k < K; ++k) r += static_cast<double>(a[i * K + k]) * b[k * N + j];
      worst = std::fmax(worst, std::fabs(out[i * N + j] - r)), scale = std::fmax(scale, std::fabs(r));
    }
  std::printf("%lld x %lld x %lld: max |out - ref| / max |ref| = %.2e\n", static_cast<long long>(M),
              static_cast<long long>(N), static_cast<long long>(K), worst / scale);
  return worst / scale > 1e-5;
}
