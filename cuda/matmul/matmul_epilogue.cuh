// The fused epilogue shared by every matmul kernel: out = act(acc + bias) + residual, computed in
// float32 from the accumulator registers and written once in the output dtype.
#pragma once
#include <type_traits>

#include "common/device.cuh"
#include "matmul/matmul_problem.h"

namespace jk::mm {

// The activations, branch-free and without cancellation in the tails (measured against float64 by
// tests/test_linear_epilogue.py and bench/lab/matmul_linear_lab.py), on the approximate MUFU instructions.
// ex2 keeps subnormal results (no .ftz): v * 2^-127 is still a normal bf16 number (tanh-gelu at v = -10
// gives -2.9e-38; flushed, it read 0). rcp only sees arguments >= 1 here: its ftz form flushes only
// results below 2^-126 (gelu's t at |v| > 2^127), where the factor it multiplies is 0 anyway.
__device__ __forceinline__ float Ex2Approx(float x) {
  float y;
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// The .ftz form: no subnormal results, and none of the three range instructions ptxas wraps around the MUFU
// for the form above.
__device__ __forceinline__ float Ex2ApproxFtz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// Exact gelu, v Phi(v) with Phi(v) = erfc(-v / sqrt 2) / 2: erfc(z) for z = |v| / sqrt 2 as
// t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), P the degree-9 Chebyshev fit of Numerical Recipes' erfcc
// (relative error < 1.2e-7 for every z >= 0), then Phi = 1 - erfc / 2 (v >= 0) or erfc / 2 (v < 0). In
// base 2 with the 1/2 folded in: erfc(z) / 2 = t 2^(Q(t) - z^2 log2 e), Q = P log2 e - 1.
// Against float64 (bench/lab/matmul_linear_lab.py --cpu-gelu, float32 emulation): max relative error
// 4e-7 for |v| < 1, 9e-7 for |v| < 3, 3e-6 down to v = -8 and 8e-6 down to the float32 underflow
// (the float32 rounding of the exponent), far below the bf16/f16 output rounding (2e-3 / 5e-4); on the
// H200 every bf16 output over [-13, 13] was the correctly rounded float64 value (the __expf/__fdividef
// form before this one, bench/lab/matmul_linear_h200.md; this form with ex2.ftz, session 17,
// bench/lab/s17_linear_lab_h200.txt). The erff form
// 0.5 v (1 + erff(v / sqrt 2)) cancels for v << 0 (10% off at v = -5, 0 from v = -5.9 on) and takes ~32
// SASS instructions per element to these ~20 (2 on the MUFU pipe; the __expf form took ~32 with its
// denormal guards).
__device__ __forceinline__ float GeluErfc(float v) {
  constexpr float kLog2e = 1.4426950408889634f;
  const float a = fabsf(v);
  const float t = RcpApprox(fmaf(a, 0.35355339059327373f, 1.f));  // 1 / (1 + z / 2)
  float q = 0.17087277f * kLog2e;
  q = fmaf(q, t, -0.82215223f * kLog2e);
  q = fmaf(q, t, 1.48851587f * kLog2e);
  q = fmaf(q, t, -1.13520398f * kLog2e);
  q = fmaf(q, t, 0.27886807f * kLog2e);
  q = fmaf(q, t, -0.18628806f * kLog2e);
  q = fmaf(q, t, 0.09678418f * kLog2e);
  q = fmaf(q, t, 0.37409196f * kLog2e);
  q = fmaf(q, t, 1.00002368f * kLog2e);
  // The exponent is raised by 64 (free: the constant term) and the product scaled back by 2^-64, so the ex2
  // result stays normal and its .ftz form serves; the scaling multiply rounds a subnormal Phi(-|v|) (v below
  // about -9.4) correctly. Two instructions an element fewer than ex2.approx.f32 with its range fix-up
  // (bench/lab/s17_h200.md: each epilogue instruction slows the other warpgroup's mainloop).
  q = fmaf(q, t, -1.26551223f * kLog2e - 1.f + 64.f);
  const float half_erfc = t * Ex2ApproxFtz(fmaf(a * (-0.5f * kLog2e), a, q)) * 0x1p-64f;  // Phi(-|v|)
  return v * (v >= 0.f ? 1.f - half_erfc : half_erfc);  // NaN: v >= 0 is false, NaN * ... = NaN
}
// v sigmoid(s) for s of v's sign, with e = exp(-|s|) in (0, 1]: sigmoid(|s|) = 1 / (1 + e),
// sigmoid(-|s|) = e / (1 + e), so neither tail cancels or overflows. abs_s_log2e = |s| log2 e.
__device__ __forceinline__ float TimesSigmoid(float v, float abs_s_log2e) {
  const float e = Ex2Approx(-abs_s_log2e);
  const float r = RcpApprox(1.f + e);
  return v * (v >= 0.f ? r : e * r);
}
// tanh-gelu: 0.5 v (1 + tanh(u)) = v sigmoid(2u), u = sqrt(2 / pi) (v + 0.044715 v^3) (u has v's sign).
__device__ __forceinline__ float GeluTanh(float v) {
  return TimesSigmoid(v, fabsf(fmaf(0.044715f * v, v * v, v)) * (1.5957691216057308f * 1.4426950408889634f));
}
__device__ __forceinline__ float Silu(float v) { return TimesSigmoid(v, fabsf(v) * 1.4426950408889634f); }

// The libm forms (CUDA's erff, tanhf, expf and IEEE division; the session-3 code) for the lab's comparison
// (JK_MATMUL_WGMMA_ACT=libm). They cancel in the negative tails.
template <Activation A>
__device__ __forceinline__ float ActivateLibm(float v) {
  if constexpr (A == Activation::kGelu) return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
  else if constexpr (A == Activation::kGeluTanh)
    return 0.5f * v * (1.f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
  else if constexpr (A == Activation::kSilu) return v / (1.f + expf(-v));
  else return v;
}

__device__ __forceinline__ float Activate(Activation act, float v) {
  switch (act) {
    case Activation::kNone: return v;
    case Activation::kRelu: return v > 0.f ? v : (v != v ? v : 0.f);  // NaN stays NaN, as jax.nn.relu
    case Activation::kGelu: return GeluErfc(v);
    case Activation::kGeluTanh: return GeluTanh(v);
    case Activation::kSilu: return Silu(v);
  }
  return v;
}

// float32 outputs keep the libm forms: their ~1 ulp in the central range is below GeluErfc's ~1e-6, which
// only 16-bit outputs can afford. One switch over every activation, as before the 16-bit forms existed: a
// second switch falling through to Activate changed the code ptxas built around the float32 SIMT main loop
// (H200 benchmark, exact float32 4096^3: 3.79 ms against 3.40-3.43 with the single switch); this form
// compiled that kernel to the same SASS as then (until session 16's k groups changed its setup code, see
// SimtRegisterBlockedBody).
template <typename T>
__device__ __forceinline__ float ActivateFor(Activation act, float v) {
  if constexpr (std::is_same_v<T, float>) {
    switch (act) {
      case Activation::kNone: return v;
      case Activation::kRelu: return v > 0.f ? v : (v != v ? v : 0.f);  // NaN stays NaN, as jax.nn.relu
      case Activation::kGelu: return ActivateLibm<Activation::kGelu>(v);
      case Activation::kGeluTanh: return ActivateLibm<Activation::kGeluTanh>(v);
      case Activation::kSilu: return ActivateLibm<Activation::kSilu>(v);
    }
    return v;
  } else {
    return Activate(act, v);
  }
}

// The same activations with the choice made at compile time: a loop over a vector with one switch
// outside keeps the code that runs per vector short and contiguous.
template <Activation A, bool kLibm = false>
__device__ __forceinline__ float ActivateAs(float v) {
  if constexpr (kLibm) return ActivateLibm<A>(v);
  else return Activate(A, v);
}
template <Activation A, int V, bool kLibm = false>
__device__ __forceinline__ void ActivateVec(float (&v)[V]) {
#pragma unroll
  for (int q = 0; q < V; ++q) v[q] = ActivateAs<A, kLibm>(v[q]);
}
// ActivateVec with the activation chosen at run time, once for the vector; libm: ActivateLibm's forms.
template <int V>
__device__ __forceinline__ void ActivateVecAs(Activation act, float (&v)[V], bool libm) {
  if (libm) {
    switch (act) {
      case Activation::kGelu: ActivateVec<Activation::kGelu, V, true>(v); return;
      case Activation::kGeluTanh: ActivateVec<Activation::kGeluTanh, V, true>(v); return;
      case Activation::kSilu: ActivateVec<Activation::kSilu, V, true>(v); return;
      default: break;
    }
  }
  switch (act) {
    case Activation::kNone: break;
    case Activation::kRelu: ActivateVec<Activation::kRelu>(v); break;
    case Activation::kGelu: ActivateVec<Activation::kGelu>(v); break;
    case Activation::kGeluTanh: ActivateVec<Activation::kGeluTanh>(v); break;
    case Activation::kSilu: ActivateVec<Activation::kSilu>(v); break;
  }
}

// 8 floats rounded to 16-bit T, packed in order into 16 bytes.
template <typename T>
__device__ __forceinline__ uint4 PackRow8(const float (&v)[8]) {
  uint32_t w[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const T lo_t = FromFloat<T>(v[2 * q]), hi_t = FromFloat<T>(v[2 * q + 1]);
    uint16_t lo, hi;
    memcpy(&lo, &lo_t, 2);
    memcpy(&hi, &hi_t, 2);
    w[q] = lo | (static_cast<uint32_t>(hi) << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// One batch index's view of the output side of the problem.
template <typename T>
struct Epilogue {
  T* out;
  const T* bias;      // null: none; indexed by column
  const T* residual;  // null: none
  int64_t m, n, res_row_stride, res_col_stride;
  Activation act;

  __device__ __forceinline__ Epilogue(const MatmulProblem& p, int64_t z, const BatchOffsets& o)
      : out(static_cast<T*>(p.out) + z * p.m * p.n),
        bias(p.bias ? static_cast<const T*>(p.bias) + o.bias : nullptr),
        residual(p.residual ? static_cast<const T*>(p.residual) + o.res : nullptr),
        m(p.m), n(p.n), res_row_stride(p.res_row_stride), res_col_stride(p.res_col_stride),
        act(p.activation) {}

  __device__ __forceinline__ float Apply(int64_t row, int64_t col, float v) const {
    if (bias) v += ToFloat(bias[col]);
    v = ActivateFor<T>(act, v);
    if (residual) v += ToFloat(residual[row * res_row_stride + col * res_col_stride]);
    return v;
  }
  // Bounds-checked store of one element.
  __device__ __forceinline__ void Store(int64_t row, int64_t col, float v) const {
    if (row < m && col < n) out[row * n + col] = FromFloat<T>(Apply(row, col, v));
  }
  // V adjacent columns of one row; one vector store when vec_ok (n % V == 0, out 16-byte aligned).
  template <int V>
  __device__ __forceinline__ void StoreVec(int64_t row, int64_t col, const float (&v)[V], bool vec_ok) const {
    if (row >= m) return;
    // A plain matmul's float32 vectors: one 16-byte store, no per-element bias / activation / residual branches
    // (8 elements a thread in the exact float32 split-K kernel had run ~100 epilogue instructions a warp).
    if constexpr (std::is_same_v<T, float> && V == 4) {
      if (vec_ok && col + V <= n && bias == nullptr && residual == nullptr && act == Activation::kNone) {
        asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(out + row * n + col), "f"(v[0]), "f"(v[1]),
                     "f"(v[2]), "f"(v[3]) : "memory");
        return;
      }
    }
    if (vec_ok && col + V <= n) {
      Pack<T, V> pk;
#pragma unroll
      for (int q = 0; q < V; ++q) pk.v[q] = FromFloat<T>(Apply(row, col + q, v[q]));
      if constexpr (sizeof(T) == 2 && V == 8) {  // one 16-byte store (plain C++ stores of a
                                                 // 16-byte struct compile to 4-byte ones)
        uint32_t w[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          uint16_t lo, hi;
          memcpy(&lo, &pk.v[2 * q], 2);
          memcpy(&hi, &pk.v[2 * q + 1], 2);
          w[q] = lo | (static_cast<uint32_t>(hi) << 16);
        }
        asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(out + row * n + col), "r"(w[0]), "r"(w[1]),
                     "r"(w[2]), "r"(w[3]) : "memory");
      } else {
        *reinterpret_cast<Pack<T, V>*>(out + row * n + col) = pk;
      }
    } else {
#pragma unroll
      for (int q = 0; q < V; ++q) Store(row, col + q, v[q]);
    }
  }
  // The 16-bit bias and residual values of StoreRow8's 8 outputs (as bit patterns), loaded apart from it so
  // that a caller can issue them a chunk ahead: in an epilogue loop, a residual load issued just before
  // its use exposes a global-memory latency per 8 outputs.
  struct Row8Inputs {
    uint4 bias, res;
  };
  // col % 8 == 0 and n % 8 == 0 (StoreRow8's contract): 16-byte loads where the operand is contiguous and
  // aligned along the row, else 8 gathered 2-byte loads; zeros outside the matrix or without the operand.
  __device__ __forceinline__ Row8Inputs LoadRow8(int64_t row, int64_t col) const {
    Row8Inputs in{make_uint4(0, 0, 0, 0), make_uint4(0, 0, 0, 0)};
    if (row >= m || col >= n) return in;
    if (bias) in.bias = Load8(bias + col, 1);
    if (residual) in.res = Load8(residual + row * res_row_stride + col * res_col_stride, res_col_stride);
    return in;
  }
  // 8 adjacent columns of one 16-bit row (col % 8 == 0, n % 8 == 0, out 16-byte aligned): the bias,
  // one activation switch for all 8 and the residual, then one 16-byte store. Unlike StoreVec, which
  // inlines every activation once per element, the code a call runs is short and straight, so an
  // epilogue loop built on it stays in the instruction cache.
  // libm: the activations' libm forms (ActivateLibm; the lab's comparison).
  __device__ __forceinline__ void StoreRow8(int64_t row, int64_t col, float (&v)[8], const Row8Inputs& in,
                                            bool libm = false) const {
    static_assert(sizeof(T) == 2, "16-bit outputs");
    if (row >= m || col >= n) return;
    if (bias) AddRow8(v, in.bias);
    ActivateVecAs(act, v, libm);
    if (residual) AddRow8(v, in.res);
    const uint4 w = PackRow8<T>(v);
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(out + row * n + col), "r"(w.x), "r"(w.y),
                 "r"(w.z), "r"(w.w) : "memory");
  }
  __device__ __forceinline__ void StoreRow8(int64_t row, int64_t col, float (&v)[8]) const {
    StoreRow8(row, col, v, LoadRow8(row, col));
  }
  // 8 elements from `p` on, `stride` apart, as packed 16-bit bit patterns.
  static __device__ __forceinline__ uint4 Load8(const T* p, int64_t stride) {
    if (stride == 1 && IsAligned(p, 16)) return __ldg(reinterpret_cast<const uint4*>(p));
    uint16_t e[8];
#pragma unroll
    for (int q = 0; q < 8; ++q) memcpy(&e[q], p + q * stride, 2);
    return make_uint4(e[0] | (uint32_t{e[1]} << 16), e[2] | (uint32_t{e[3]} << 16), e[4] | (uint32_t{e[5]} << 16),
                      e[6] | (uint32_t{e[7]} << 16));
  }
  // Two adjacent columns' 16-bit bias / residual values (col even, n % 8 == 0) as packed bit patterns, for
  // the fragment-layout epilogue; zeros outside the matrix or without the operand.
  __device__ __forceinline__ uint32_t BiasPair(int64_t col) const {
    return bias != nullptr && col < n ? Load2(bias + col, 1) : 0u;
  }
  __device__ __forceinline__ uint32_t ResPair(int64_t row, int64_t col) const {
    return residual != nullptr && row < m && col < n
               ? Load2(residual + row * res_row_stride + col * res_col_stride, res_col_stride)
               : 0u;
  }
  // 2 elements from `p` on, `stride` apart, as packed 16-bit bit patterns.
  static __device__ __forceinline__ uint32_t Load2(const T* p, int64_t stride) {
    if (stride == 1 && IsAligned(p, 4)) return __ldg(reinterpret_cast<const unsigned int*>(p));
    uint16_t lo, hi;
    memcpy(&lo, p, 2);
    memcpy(&hi, p + stride, 2);
    return lo | (static_cast<uint32_t>(hi) << 16);
  }
  static __device__ __forceinline__ void AddPair(float& lo, float& hi, uint32_t bits) {
    const uint16_t l = static_cast<uint16_t>(bits & 0xFFFFu), h = static_cast<uint16_t>(bits >> 16);
    T lo_t, hi_t;
    memcpy(&lo_t, &l, 2);
    memcpy(&hi_t, &h, 2);
    lo += ToFloat(lo_t);
    hi += ToFloat(hi_t);
  }
  static __device__ __forceinline__ void AddRow8(float (&v)[8], const uint4& bits) {
    const uint32_t w[4] = {bits.x, bits.y, bits.z, bits.w};
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const uint16_t lo = static_cast<uint16_t>(w[q] & 0xFFFFu), hi = static_cast<uint16_t>(w[q] >> 16);
      T lo_t, hi_t;
      memcpy(&lo_t, &lo, 2);
      memcpy(&hi_t, &hi, 2);
      v[2 * q] += ToFloat(lo_t);
      v[2 * q + 1] += ToFloat(hi_t);
    }
  }
  // Two adjacent columns (col even, n even, out 4-byte aligned for halves): one paired store.
  __device__ __forceinline__ void Store2(int64_t row, int64_t col, float v0, float v1, bool paired) const {
    if (row >= m) return;
    if (paired && col + 1 < n) {
      Pack<T, 2> pk;
      pk.v[0] = FromFloat<T>(Apply(row, col, v0));
      pk.v[1] = FromFloat<T>(Apply(row, col + 1, v1));
      *reinterpret_cast<Pack<T, 2>*>(out + row * n + col) = pk;
    } else {
      Store(row, col, v0);
      Store(row, col + 1, v1);
    }
  }
};

}  // namespace jk::mm
