// LayerNorm / RMSNorm statistics and outputs for the ring tier (common/long_rows.cuh). Statistics in
// float32: LayerNorm merges exact per-chunk (count, mean, M2) of x - shift (Chan), RMSNorm sums squares.
#pragma once
#include "common/long_rows.cuh"
#include "norm/norm_kernels.cuh"

namespace jk::norm {

template <typename T, Kind K>
struct RingNormOp {
  Params<T> p;
  static constexpr bool kShift = K == Kind::kLayerNorm;
  // Scale and bias packs come with each output pack: 2 at a time keep the kernel within 96 registers.
  static constexpr int kOutputGroup = 2;
  static constexpr int P = 16 / sizeof(T);
  struct ColumnParams {  // the scale and bias packs of one output pack
    uint4 g, b;
  };
  using Stats3 = long_rows::Stats3;  // LayerNorm: (count, mean, M2); RMSNorm: (sum of squares, -, -)

  __device__ __forceinline__ Stats3 Init() const { return Stats3{}; }
  template <int N>
  __device__ __forceinline__ void Add(Stats3& st, const float (&v)[N], int valid, float shift) const {
    if constexpr (K == Kind::kRmsNorm) {
#pragma unroll
      for (int e = 0; e < N; ++e)
        if (e < valid) st.a += v[e] * v[e];
    } else {
      if (valid == 0) return;
      float s = 0.f;
#pragma unroll
      for (int e = 0; e < N; ++e)
        if (e < valid) s += v[e] - shift;
      const float cnt = static_cast<float>(valid), mean = s / cnt;
      float m2 = 0.f;
#pragma unroll
      for (int e = 0; e < N; ++e) {
        if (e < valid) {
          const float d = (v[e] - shift) - mean;
          m2 += d * d;
        }
      }
      st = Merge(st, Stats3{cnt, mean, m2});
    }
  }
  __device__ __forceinline__ static Stats3 Merge(const Stats3& x, const Stats3& y) {
    if constexpr (K == Kind::kRmsNorm) {
      return Stats3{x.a + y.a, 0.f, 0.f};
    } else {
      if (y.a == 0.f) return x;
      if (x.a == 0.f) return y;
      const float n = x.a + y.a, d = y.b - x.b, w = y.a / n;
      return Stats3{n, x.b + d * w, x.c + y.c + d * d * x.a * w};
    }
  }
  __device__ __forceinline__ static Stats3 Rebase(const Stats3& s, float delta) {
    return K == Kind::kLayerNorm ? Stats3{s.a, s.b + delta, s.c} : s;
  }
  __device__ __forceinline__ Stats3 Finalize(const Stats3& st, float shift, int64_t row, bool writer) const {
    const float inv_n = 1.f / static_cast<float>(p.n);
    float mean = 0.f, rstd;
    if constexpr (K == Kind::kLayerNorm) {
      mean = shift + st.b;
      rstd = RstdFrom(st.c * inv_n, p.epsilon);
    } else {
      rstd = RstdFrom(st.a * inv_n, p.epsilon);
    }
    if (writer && p.mean != nullptr) {
      p.mean[row] = mean;
      p.rstd[row] = rstd;
    }
    return Stats3{mean, rstd, 0.f};
  }
  __device__ __forceinline__ ColumnParams Load(int64_t row, int64_t col) const {
    ColumnParams r{};
    if (p.scale != nullptr) r.g = *reinterpret_cast<const uint4*>(ScaleRow(p, row) + col);
    if (K == Kind::kLayerNorm && p.bias != nullptr) r.b = *reinterpret_cast<const uint4*>(BiasRow(p, row) + col);
    return r;
  }
  template <int Q>
  __device__ __forceinline__ void Apply(float (&v)[Q], const Stats3& fin, const ColumnParams& prm) const {
    float g[P], b[P];
    long_rows::ToFloats<T, P>(prm.g, g);
    long_rows::ToFloats<T, P>(prm.b, b);
#pragma unroll
    for (int e = 0; e < P; ++e) {
      float r = (K == Kind::kLayerNorm ? v[e] - fin.a : v[e]) * fin.b;
      if (p.scale != nullptr) r *= g[e];
      if (K == Kind::kLayerNorm && p.bias != nullptr) r += b[e];
      v[e] = r;
    }
  }
};

}  // namespace jk::norm
