// CPU LayerNorm / RMSNorm: the same contract as the CUDA launchers (norm/norm_launch.h), in plain C++.
// Each returns false only for a dtype outside float32/bfloat16/float16 (the handlers check first).
#pragma once
#include "common/dtype.h"
#include "norm/norm_shape.h"

namespace jk::cpu {

bool LayerNorm(DType dtype, const void* x, const void* scale, const void* bias, void* y, float* mean,
               float* rstd, const NormShape& shape, float epsilon);
bool RmsNorm(DType dtype, const void* x, const void* scale, void* y, const NormShape& shape, float epsilon);

// Statistics only: LayerNorm's local mean and M2 = sum((x - mean)^2); RMSNorm's mean of squares.
bool LayerNormStats(DType dtype, const void* x, float* mean, float* m2, const NormShape& shape);
bool RmsNormStats(DType dtype, const void* x, float* mean_square, const NormShape& shape);

// Normalisation with given statistics.
bool LayerNormApply(DType dtype, const void* x, const float* mean, const float* rstd, const void* scale,
                    const void* bias, void* y, const NormShape& shape);
bool RmsNormApply(DType dtype, const void* x, const float* rstd, const void* scale, void* y,
                  const NormShape& shape);

}  // namespace jk::cpu
