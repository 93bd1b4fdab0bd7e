// Tensor-core tier instantiations for bfloat16 (m16n8k16).
#include "matmul/matmul_mma_launch.cuh"

namespace jk::mm {
template cudaError_t LaunchMma<__nv_bfloat16, false, false>(cudaStream_t, const MatmulProblem&);
}  // namespace jk::mm
