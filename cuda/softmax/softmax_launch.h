// Softmax / log-softmax launchers: plain C++ (no XLA, no CUDA kernel headers), shared by the CUDA launcher,
// the CPU implementation and the FFI handlers.
//
// Contract: x (and y) are viewed as (outer, n, inner) around the softmax axis; element (o, j, i) lives at
// (o * n + j) * inner + i. "Row" (o, i) is the n elements along the axis; its statistics are stored at
// o * inner + i (the x shape with the axis removed).
//
// The optional boolean mask keeps its own broadcast (size-1) dims: it is never expanded to x's shape. Its
// entry for (o, j, i) is data[outer.Offset(o) + j * axis_stride + inner.Offset(i)], where Offset decomposes
// a flat outer (or inner) index into the (merged) x dims and applies the mask's strides (0 on broadcast
// dims). A causal (2048, 2048) mask for a (16, 2048, 2048) tensor is therefore read per row, never copied.
#pragma once
#include <cstdint>

#include "common/dtype.h"
#include "common/workspace.h"

#ifdef __CUDACC__
#define JK_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define JK_HOST_DEVICE inline
#endif
#if defined(__CUDACC__) || defined(JK_WITH_CUDA)
#include <cuda_runtime_api.h>
#define JK_SOFTMAX_LAUNCHERS 1
#endif

namespace jk {

// Index map of a flat index over merged dims (outermost first) to a mask offset.
struct BroadcastDims {
  static constexpr int kMaxDims = 8;
  int32_t rank = 0;
  int64_t size[kMaxDims] = {};
  int64_t stride[kMaxDims] = {};

  // The outermost dim needs no modulo (the index is in range), so the common 1-dim case costs no division.
  JK_HOST_DEVICE int64_t Offset(int64_t idx) const {
    int64_t off = 0;
    for (int d = rank - 1; d > 0; --d) {
      int64_t q = idx / size[d];
      off += (idx - q * size[d]) * stride[d];
      idx = q;
    }
    return rank > 0 ? off + idx * stride[0] : 0;
  }
  // True when every offset this map produces is a multiple of `v` (for vectorised mask loads).
  JK_HOST_DEVICE bool StridesMultipleOf(int64_t v) const {
    for (int d = 0; d < rank; ++d)
      if (stride[d] % v != 0) return false;
    return true;
  }
};

struct MaskIndex {
  const uint8_t* data = nullptr;  // XLA's PRED: one byte, 0 or 1. Null: no mask.
  int64_t axis_stride = 0;        // 1 (mask spans the axis) or 0 (broadcast along it)
  BroadcastDims outer, inner;
};

#ifdef JK_SOFTMAX_LAUNCHERS
// Row-wise softmax (log_softmax when `log`) of x into y, float32 statistics.
// ws: the split-axis tier's workspace (softmax_split.cuh), or none.
cudaError_t LaunchSoftmax(cudaStream_t stream, DType dtype, const void* x, void* y, int64_t outer, int64_t n,
                          int64_t inner, const MaskIndex& mask, bool log, const Workspace& ws = {});
// Per-row local max and sum of exp(x - max) over the live entries (P2: sharding along the axis).
cudaError_t LaunchSoftmaxStats(cudaStream_t stream, DType dtype, const void* x, float* row_max,
                               float* row_sum, int64_t outer, int64_t n, int64_t inner, const MaskIndex& mask);
// y from given (global) per-row max and sum.
cudaError_t LaunchSoftmaxApply(cudaStream_t stream, DType dtype, const void* x, const float* row_max,
                               const float* row_sum, void* y, int64_t outer, int64_t n, int64_t inner,
                               const MaskIndex& mask, bool log);
#endif

}  // namespace jk
