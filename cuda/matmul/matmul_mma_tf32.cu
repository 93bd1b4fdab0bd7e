// Tensor-core tier instantiations for float32 at DEFAULT/HIGH precision (TF32 m16n8k8).
#include "matmul/matmul_mma_launch.cuh"

namespace jk::mm {
template cudaError_t LaunchMma<float, false, false>(cudaStream_t, const MatmulProblem&);
}  // namespace jk::mm
