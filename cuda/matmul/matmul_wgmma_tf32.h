// Host side of the Hopper TF32 tier (matmul_wgmma_tf32.cuh): eligibility and launch. Plain C++.
#pragma once
#include <cuda_runtime_api.h>

#include "matmul/matmul_problem.h"

namespace jk::mm {

// True when LaunchWgmmaTf32 can run `p` on the current device and the tier is chosen for it: an sm_90
// device with the sm_90a kernel in this build, float32 at precision DEFAULT or HIGH, K and N multiples of
// 4, a, b and out 16-byte aligned, batch strides of whole matrices. JK_MATMUL_TF32 (read at every launch):
// =mma never (the mma.sync TF32 tier runs instead), =wgmma every eligible shape; unset, the shapes where it
// was measured faster (matmul_wgmma_tf32.cu).
bool WgmmaTf32Eligible(const MatmulProblem& p);

// Builds the tensor maps and launches the persistent kernel on `stream`. cudaErrorNotSupported (before
// any launch) when the driver refuses a tensor map: the caller falls back to the mma.sync tier.
cudaError_t LaunchWgmmaTf32(cudaStream_t stream, const MatmulProblem& p);

}  // namespace jk::mm
