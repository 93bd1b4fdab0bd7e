// PLACEHOLDER until the tensor-core tier lands: the SIMT tiled kernel stands in.
#pragma once
#include <algorithm>
#include <cuda_runtime_api.h>
#include "common/launch.h"
#include "matmul/matmul_simt.cuh"
namespace jk::mm {
inline cudaError_t LaunchMma(cudaStream_t stream, const MatmulProblem& p) {
  const dim3 grid(static_cast<unsigned>(CeilDiv(p.n, 64)), static_cast<unsigned>(std::min<int64_t>(CeilDiv(p.m, 64), 65535)),
                  static_cast<unsigned>(std::min<int64_t>(p.batch_count, 65535)));
  return DispatchFloat<float, __nv_bfloat16, __half>(p.dtype, cudaErrorInvalidValue, [&](auto tag) {
    SimtTiledKernel<typename decltype(tag)::type><<<grid, kSimtThreads, 0, stream>>>(p);
    return LastLaunchError();
  });
}
}  // namespace jk::mm
