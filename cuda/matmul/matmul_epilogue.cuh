// The fused epilogue shared by every matmul kernel: out = act(acc + bias) + residual, computed in
// float32 from the accumulator registers and written once in the output dtype.
#pragma once
#include "common/device.cuh"
#include "matmul/matmul_problem.h"

namespace jk::mm {

__device__ __forceinline__ float Activate(Activation act, float v) {
  switch (act) {
    case Activation::kNone: return v;
    case Activation::kRelu: return v > 0.f ? v : (v != v ? v : 0.f);  // NaN stays NaN, as jax.nn.relu
    case Activation::kGelu: return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
    case Activation::kGeluTanh: return 0.5f * v * (1.f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    case Activation::kSilu: return v / (1.f + expf(-v));
  }
  return v;
}

// The same activations with the choice made at compile time: a loop over a vector with one switch
// outside keeps the code that runs per vector short and contiguous.
template <Activation A>
__device__ __forceinline__ float ActivateAs(float v) {
  return Activate(A, v);
}
template <Activation A, int V>
__device__ __forceinline__ void ActivateVec(float (&v)[V]) {
#pragma unroll
  for (int q = 0; q < V; ++q) v[q] = ActivateAs<A>(v[q]);
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
    v = Activate(act, v);
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
  // 8 adjacent columns of one 16-bit row (col % 8 == 0, n % 8 == 0, out 16-byte aligned): the bias,
  // one activation switch for all 8 and the residual, then one 16-byte store. Unlike StoreVec, which
  // inlines every activation once per element, the code a call runs is short and straight, so an
  // epilogue loop built on it stays in the instruction cache.
  __device__ __forceinline__ void StoreRow8(int64_t row, int64_t col, float (&v)[8]) const {
    static_assert(sizeof(T) == 2, "16-bit outputs");
    if (row >= m || col >= n) return;
    if (bias) {
#pragma unroll
      for (int q = 0; q < 8; ++q) v[q] += ToFloat(bias[col + q]);
    }
    switch (act) {
      case Activation::kNone: break;
      case Activation::kRelu: ActivateVec<Activation::kRelu>(v); break;
      case Activation::kGelu: ActivateVec<Activation::kGelu>(v); break;
      case Activation::kGeluTanh: ActivateVec<Activation::kGeluTanh>(v); break;
      case Activation::kSilu: ActivateVec<Activation::kSilu>(v); break;
    }
    if (residual) {
#pragma unroll
      for (int q = 0; q < 8; ++q) v[q] += ToFloat(residual[row * res_row_stride + (col + q) * res_col_stride]);
    }
    uint32_t w[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const T lo_t = FromFloat<T>(v[2 * q]), hi_t = FromFloat<T>(v[2 * q + 1]);
      uint16_t lo, hi;
      memcpy(&lo, &lo_t, 2);
      memcpy(&hi, &hi_t, 2);
      w[q] = lo | (static_cast<uint32_t>(hi) << 16);
    }
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(out + row * n + col), "r"(w[0]), "r"(w[1]),
                 "r"(w[2]), "r"(w[3]) : "memory");
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
