// Shared by the standalone lab programs (bench/lab/*.cu, built with nvcc -I cuda -I bench/lab or included by
// relative path): a CUDA error check, a string splitter for the CASES / VARIANTS environment lists, the
// cudaEvent timing with an optional L2 flush, and the decode labs' bf16 problem with its float64 reference and its
// device copy. Host and helper kernels only; nothing here is in the library.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "matmul/matmul_problem.h"  // MatmulProblem (Bf16Matmul::Upload); labs build with -I cuda

#define CHECK(x)                                                                            \
  do {                                                                                      \
    cudaError_t e_ = (x);                                                                   \
    if (e_ != cudaSuccess) {                                                                \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

namespace lab {

inline std::vector<std::string> Split(const std::string& s, char d) {
  std::vector<std::string> out;
  size_t a = 0;
  while (a <= s.size()) {
    size_t b = s.find(d, a);
    if (b == std::string::npos) b = s.size();
    if (b > a) out.push_back(s.substr(a, b - a));
    a = b + 1;
  }
  return out;
}

// Reads the flush buffer: clean lines (a memset would leave 50 MB of dirty L2 lines to write back during the
// timed launch).
__global__ void ReadFlush(const int4* p, int64_t n4, int* sink) {
  int acc = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n4; i += int64_t(gridDim.x) * blockDim.x) {
    const int4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc;
}

// The copy reference: a float4 read-and-scale of n4 16-byte words.
// A plain read of n16 16-byte vectors of b (the decode labs' stream ceiling), 4 loads in flight a thread.
__global__ void ReadB(const uint4* b, int64_t n16, unsigned* sink) {
  unsigned acc = 0;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = __ldcg(b + i + j * stride);
#pragma unroll
    for (int j = 0; j < 4; ++j) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  for (; i < n16; i += stride) {
    const uint4 v = __ldcg(b + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) *sink = acc;
}

__global__ void CopyScale(const float4* x, float4* y, int64_t n4) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n4; i += int64_t(gridDim.x) * blockDim.x) {
    float4 v = x[i];
    v.x *= 1.0001f; v.y *= 1.0001f; v.z *= 1.0001f; v.w *= 1.0001f;
    y[i] = v;
  }
}

constexpr size_t kFlushBytes = size_t{256} << 20;
inline void* FlushBuffer() {
  static void* buf = [] {
    void* p = nullptr;
    CHECK(cudaMalloc(&p, kFlushBytes));
    CHECK(cudaMemset(p, 1, kFlushBytes));
    return p;
  }();
  return buf;
}

// cudaEvent time of one launch (us), median of `reps` after 3 warm-ups, each timed launch queued behind before() (work
// outside the events: an L2 flush, a spin kernel). launch() returns a cudaError_t.
template <typename F, typename B>
float TimeMedianAfter(F&& launch, B&& before, int reps = 15) {
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i) CHECK(launch());
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    before();
    CHECK(cudaEventRecord(e0));
    CHECK(launch());
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1000.f);
  }
  std::sort(t.begin(), t.end());
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  return t[t.size() / 2];
}

// The same, each launch after a read of 256 MB when `flush` (else back to back, the previous launch's lines left in
// L2).
template <typename F>
float TimeMedian(F&& launch, bool flush, int reps = 15) {
  return TimeMedianAfter(launch, [flush] {
    if (flush) ReadFlush<<<132 * 4, 512>>>(static_cast<const int4*>(FlushBuffer()), kFlushBytes / 16,
                                            static_cast<int*>(FlushBuffer()));
  }, reps);
}

// bf16 <-> float on the host (round to nearest even).
inline float Bf16ToFloat(uint16_t h) {
  const uint32_t u = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// A bf16 matmul a (m, k) @ b (k, n) of uniform values in [-1, 1) (a fixed LCG), with its float64 product.
struct Bf16Matmul {
  int64_t m, n, k;
  std::vector<uint16_t> a, b;
  std::vector<double> ref;
  Bf16Matmul(int64_t m_, int64_t n_, int64_t k_) : m(m_), n(n_), k(k_), a(m_ * k_), b(k_ * n_), ref(m_ * n_, 0.0) {
    uint32_t seed = 12345;
    auto rnd = [&] {
      seed = seed * 1664525u + 1013904223u;
      return (static_cast<float>(seed >> 8) / 16777216.f - 0.5f) * 2.f;
    };
    for (auto& v : a) v = FloatToBf16(rnd());
    for (auto& v : b) v = FloatToBf16(rnd());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t kk = 0; kk < k; ++kk) {
        const double av = Bf16ToFloat(a[i * k + kk]);
        for (int64_t j = 0; j < n; ++j) ref[i * n + j] += av * Bf16ToFloat(b[kk * n + j]);
      }
  }
  // Device copies of a and b and an m x n output (*a, *b, *out; the caller frees them), as a row-major bf16
  // MatmulProblem.
  jk::MatmulProblem Upload(void** da, void** db, void** dout) const {
    CHECK(cudaMalloc(da, m * k * 2));
    CHECK(cudaMalloc(db, k * n * 2));
    CHECK(cudaMalloc(dout, m * n * 2));
    CHECK(cudaMemcpy(*da, a.data(), m * k * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(*db, b.data(), k * n * 2, cudaMemcpyHostToDevice));
    jk::MatmulProblem p;
    p.dtype = jk::DType::kBF16;
    p.m = m;
    p.n = n;
    p.k = k;
    p.a = *da;
    p.b = *db;
    p.out = *dout;
    return p;
  }
  // max |out - ref| / (|ref| + 1) over the device output `out` (m x n bf16).
  double MaxRelErr(const void* out) const {
    std::vector<uint16_t> ho(m * n);
    CHECK(cudaMemcpy(ho.data(), out, m * n * 2, cudaMemcpyDeviceToHost));
    double err = 0.0;
    for (int64_t i = 0; i < m * n; ++i)
      err = std::max(err, std::fabs(Bf16ToFloat(ho[i]) - ref[i]) / (std::fabs(ref[i]) + 1.0));
    return err;
  }
};

}  // namespace lab
