// Host entry points of the LayerNorm / RMSNorm kernels. Plain C++ plus the CUDA runtime types, so the FFI
// layer never sees a kernel. Every function launches on `stream` only, never synchronises, and returns
// the launch error (cudaSuccess when there was nothing to do).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/dtype.h"
#include "common/workspace.h"
#include "norm/norm_shape.h"

namespace jk {

// y = (x - mean) * rstd * scale + bias; mean/rstd (float32, outer * inner) written when non-null. ws: the split-axis
// tier's workspace (norm_split.cuh), or none.
cudaError_t LaunchLayerNorm(cudaStream_t stream, DType dtype, const void* x, const void* scale,
                            const void* bias, void* y, float* mean, float* rstd, const NormShape& shape,
                            float epsilon, const Workspace& ws = {});

// y = x * rsqrt(mean(x^2) + epsilon) * scale. ws: as LaunchLayerNorm's.
cudaError_t LaunchRmsNorm(cudaStream_t stream, DType dtype, const void* x, const void* scale, void* y,
                          const NormShape& shape, float epsilon, const Workspace& ws = {});

// Statistics only (for a normalised axis sharded over devices): LayerNorm writes the local mean and
// M2 = sum((x - mean)^2); RMSNorm writes the local mean of squares (m2 must be null).
cudaError_t LaunchLayerNormStats(cudaStream_t stream, DType dtype, const void* x, float* mean, float* m2,
                                 const NormShape& shape);
cudaError_t LaunchRmsNormStats(cudaStream_t stream, DType dtype, const void* x, float* mean_square,
                               const NormShape& shape);

// Normalisation with given statistics (mean is null for RMSNorm).
cudaError_t LaunchLayerNormApply(cudaStream_t stream, DType dtype, const void* x, const float* mean,
                                 const float* rstd, const void* scale, const void* bias, void* y,
                                 const NormShape& shape);
cudaError_t LaunchRmsNormApply(cudaStream_t stream, DType dtype, const void* x, const float* rstd,
                               const void* scale, void* y, const NormShape& shape);

}  // namespace jk
