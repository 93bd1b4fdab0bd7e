// Tensor-core tier instantiations for float16 operands with rows that are not 16-byte aligned (b only, or
// a and b), read through registers (MmaKernel's STAGED_A / STAGED_B).
#include "matmul/matmul_mma_launch.cuh"

namespace jk::mm {
template cudaError_t LaunchMma<__half, false, true>(cudaStream_t, const MatmulProblem&);
template cudaError_t LaunchMma<__half, true, true>(cudaStream_t, const MatmulProblem&);
}  // namespace jk::mm
