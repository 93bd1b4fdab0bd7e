// The matmul/linear problem as both backends see it: plain C++ (no XLA, no CUDA headers), shared by the
// FFI handlers, the CPU implementation and the CUDA launchers.
//
//   out[z] = act(a[z] @ b[z] + bias[z]) + residual[z]      for every batch index z
//
// a (M, K), b (K, N) and out (M, N) are row-major. Batch dims broadcast: each operand addresses batch
// index z through its own element strides (0 where it is broadcast), so a broadcast is never
// materialised. The handler has already coalesced the batch dims and folded into M every innermost batch
// dim over which b and bias are shared (a (B, M, K) @ b (K, N) runs as one (B*M, K) @ (K, N) GEMM).
#pragma once
#include <cstdint>

#include "common/dtype.h"

namespace jk {

// Attribute values of the "precision" attribute (jax.lax.Precision order).
enum class MatmulPrecision : int32_t { kDefault = 0, kHigh = 1, kHighest = 2 };

// Attribute values of the "activation" attribute; jax_kernels/matmul.py holds the same table.
enum class Activation : int32_t { kNone = 0, kRelu = 1, kGelu = 2, kGeluTanh = 3, kSilu = 4 };
constexpr int32_t kNumActivations = 5;

// At most this many batch dims survive coalescing (Python rejects more before lowering).
constexpr int kMaxBatchDims = 8;

struct MatmulProblem {
  DType dtype = DType::kF32;
  MatmulPrecision precision = MatmulPrecision::kDefault;
  Activation activation = Activation::kNone;
  int64_t m = 0, n = 0, k = 0;

  // Batch dims, outermost first; the output is contiguous: batch z lives at out + z * m * n.
  int batch_rank = 0;
  int64_t batch_dims[kMaxBatchDims] = {};
  // Element strides per batch dim; 0 where the operand is broadcast along that dim.
  int64_t a_stride[kMaxBatchDims] = {};
  int64_t b_stride[kMaxBatchDims] = {};
  int64_t bias_stride[kMaxBatchDims] = {};
  int64_t res_stride[kMaxBatchDims] = {};
  int64_t batch_count = 1;

  // residual[row * res_row_stride + col * res_col_stride]: a residual of trailing shape (1, N), (M, 1)
  // or (1, 1) broadcasts with a 0 stride.
  int64_t res_row_stride = 0, res_col_stride = 0;

  const void* a = nullptr;
  const void* b = nullptr;
  const void* bias = nullptr;      // null: no bias
  const void* residual = nullptr;  // null: no residual
  void* out = nullptr;
  // One past the last byte of a's and b's buffers: set by the launchers that need the bound (the
  // register-staged tensor-core loads, which read whole aligned 16-byte blocks).
  const void* a_end = nullptr;
  const void* b_end = nullptr;
  // Scratch the caller provides (the CUDA lowering's second result, float32): the split-K decode tier
  // (SplitPipe) runs only where it holds that tier's partial sums; null / 0: none.
  void* workspace = nullptr;
  int64_t workspace_bytes = 0;
};

// Elements an operand's buffer spans: its last batch matrix's offset plus one matrix.
inline int64_t OperandExtent(const MatmulProblem& p, const int64_t* stride, int64_t matrix) {
  int64_t last = 0;
  for (int d = 0; d < p.batch_rank; ++d) last += (p.batch_dims[d] - 1) * stride[d];
  return last + matrix;
}

// Element offsets of batch index z in each operand.
struct BatchOffsets {
  int64_t a = 0, b = 0, bias = 0, res = 0;
};

#if defined(__CUDACC__)
__host__ __device__
#endif
inline BatchOffsets OffsetsOf(const MatmulProblem& p, int64_t z) {
  BatchOffsets o;
  for (int d = p.batch_rank - 1; d >= 0; --d) {
    int64_t i = z % p.batch_dims[d];
    z /= p.batch_dims[d];
    o.a += i * p.a_stride[d];
    o.b += i * p.b_stride[d];
    o.bias += i * p.bias_stride[d];
    o.res += i * p.res_stride[d];
  }
  return o;
}

}  // namespace jk
