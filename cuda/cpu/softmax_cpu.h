// CPU twin of the softmax launchers: same (outer, n, inner) contract, same mask index map, same numerics
// (float32 statistics; degenerate rows as in softmax_kernels.cuh).
#pragma once
#include <cstdint>

#include "common/dtype.h"
#include "softmax/softmax_launch.h"

namespace jk::cpu {

void Softmax(DType dtype, const void* x, void* y, int64_t outer, int64_t n, int64_t inner, const MaskIndex& mask,
             bool log);
void SoftmaxStats(DType dtype, const void* x, float* row_max, float* row_sum, int64_t outer, int64_t n,
                  int64_t inner, const MaskIndex& mask);
void SoftmaxApply(DType dtype, const void* x, const float* row_max, const float* row_sum, void* y, int64_t outer,
                  int64_t n, int64_t inner, const MaskIndex& mask, bool log);

}  // namespace jk::cpu
