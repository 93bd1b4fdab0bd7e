// Tensor-core tier instantiations for float16 (m16n8k16).
#include "matmul/matmul_mma_launch.cuh"

namespace jk::mm {
template cudaError_t LaunchMma<__half, false, false>(cudaStream_t, const MatmulProblem&);
}  // namespace jk::mm
