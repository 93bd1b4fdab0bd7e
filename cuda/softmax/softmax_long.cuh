// Softmax / log-softmax rows of 64 KB and more read from DRAM once: the ring tier
// (common/long_rows.cuh) with the online (max, sum) statistics. Unmasked 16-byte-aligned rows on sm_90.
// Numerics as in softmax_kernels.cuh: a degenerate row (non-finite max or NaN sum) is NaN everywhere.
#pragma once
#include <cstdlib>

#include "common/long_rows.cuh"
#include "softmax/softmax_kernels.cuh"

namespace jk::softmax {

struct RingSoftmaxOp {
  bool log;
  static constexpr bool kShift = false;
  static constexpr int kOutputGroup = 4;
  struct ColumnParams {};
  using Stats3 = long_rows::Stats3;

  __device__ __forceinline__ Stats3 Init() const { return Stats3{-CUDART_INF_F, 0.f, 0.f}; }
  // Chunk-wise online update: one rescale per chunk, not per element.
  template <int N>
  __device__ __forceinline__ void Add(Stats3& st, const float (&v)[N], int valid, float) const {
    float lm = -CUDART_INF_F;
#pragma unroll
    for (int e = 0; e < N; ++e)
      if (e < valid) lm = fmaxf(lm, v[e]);
    if (lm > st.a) {
      st.b *= ExpShifted(st.a, lm);
      st.a = lm;
    }
    if (st.a == -CUDART_INF_F) {  // nothing live yet: only a NaN can change s
#pragma unroll
      for (int e = 0; e < N; ++e)
        if (e < valid && isnan(v[e])) st.b = v[e];
      return;
    }
#pragma unroll
    for (int e = 0; e < N; ++e)
      if (e < valid) st.b += ExpShifted(v[e], st.a);
  }
  __device__ __forceinline__ static Stats3 Merge(const Stats3& x, const Stats3& y) {
    Stats3 r = x;
    MergeStats(r.a, r.b, y.a, y.b);
    return r;
  }
  __device__ __forceinline__ static Stats3 Rebase(const Stats3& s, float) { return s; }
  __device__ __forceinline__ Stats3 Finalize(const Stats3& st, float, int64_t, bool) const {
    if (Degenerate(st.a, st.b)) return Stats3{CUDART_NAN_F, CUDART_NAN_F, 0.f};
    return Stats3{st.a, log ? logf(st.b) : 1.f / st.b, 0.f};
  }
  __device__ __forceinline__ ColumnParams Load(int64_t, int64_t) const { return {}; }
  template <int P>
  __device__ __forceinline__ void Apply(float (&v)[P], const Stats3& fin, const ColumnParams&) const {
#pragma unroll
    for (int e = 0; e < P; ++e) {
      const float t = v[e] - fin.a;
      v[e] = log ? t - fin.b : Exp2(t * kLog2e) * fin.b;
    }
  }
};

// The ring tier's choice for unmasked rows of n columns of T (lab knob JK_SOFTMAX_LONG = "off" or
// "ring C U L", read at every launch: see long_rows::ParseRing). Measured on an H200 (bench/lab/
// softmax_long_lab.py, bench/lab/long_rows_h200.txt: 49152 rows, 24576 at 65536; CUPTI; one process with
// jax.nn), softmax / log_softmax, ms and % of the copy ceiling:
//   float32 32768     two-pass 4.08/4.04 (74-75%)  ring 1 2 6: 3.54/3.39 (85-89%)  ring 1 4 3: 3.78/3.64
//   float32 65536     two-pass 4.62/4.58 (65-66%)  ring 2 4 3: 4.17/4.15 (72-73%)  ring 1 x (row > ring) and
//                                                  ring 4 4 3 lost (4.77-5.41)
//   bf16/f16 65536    two-pass 2.25-2.40 (63-69%)  ring 1 4 3: 2.01-2.17 (70-75%)
// Where it lost, no entry: float32 16384 (the 32-element block tier, 96%: ring 72-74%) and 16-bit 32768
// (64 packed elements per thread, 90-94%: ring 58-68%). Rows between the measured lengths take the entry
// of the longer one (the row still fits the ring or the cluster's rings the same way).
// Since session 8 these rows take the cluster tier first (softmax_launch.cu, ClusterRowsChoice: 80-89%), so
// this table applies only where JK_SOFTMAX_LONG is set ("ring C U L" there overrides it anyway).
template <typename T>
long_rows::RingChoice SoftmaxRingChoice(int64_t n) {
  const long_rows::RingChoice def = long_rows::RuleFor({{4, 16385, 32768, {true, 1, 2, 6}},
                                                        {4, 32769, 65536, {true, 2, 4, 3}},
                                                        {2, 32769, 65536, {true, 1, 4, 3}}},
                                                       sizeof(T), n);
  return long_rows::ParseRing(std::getenv("JK_SOFTMAX_LONG"), def);
}

}  // namespace jk::softmax
