// The matmul launcher: picks a kernel tier by dtype, precision, shape and alignment and launches it on
// XLA's stream. Never synchronises; returns the launch error, if any.
#pragma once
#include <cuda_runtime_api.h>

#include "matmul/matmul_problem.h"

namespace jk {

// Kernel tiers, named by algorithm (matmul_launch.cu documents when each is chosen).
enum class MatmulTier {
  kSimtTiled,            // any shape/alignment/dtype: 64x64 smem tiles, 4x4 outputs per thread
  kSimtRegisterBlocked,  // exact float32: 128x128x8 (or 64x64x8) tiles, 8x8 (4x4) per thread, float4
  kSkinnyM,              // M <= 8 (decode): GEMV-like, split-K inside the block, 16-byte loads of b
  kSkinnyMma,            // bf16 4 (f16 5) <= M <= 8 on sm_90: out^T = b^T a^T on mma.sync, b fragments from
                         // 16-byte loads, split-K over warps and a thread-block cluster (matmul_skinny_mma.cuh)
  kSkinnyStream,         // SkinnyMma's math with b and a streamed through a per-thread cp.async ring, one
                         // wave of CTAs (matmul_skinny_stream.cuh)
  kSkinnyPipe,           // bf16/f16 M <= 16 on sm_90: b streamed in whole row segments through a cp.async smem
                         // ring, mma.sync on ldmatrix fragments, split-K over a cluster (matmul_decode.cuh)
  kSplitPipe,            // SkinnyPipe's stream and math in many small CTAs splitting K without a cluster, float32
                         // partials to the caller's workspace, then a sum + epilogue kernel (matmul_decode_split.cuh)
  kMmaTensorCore,        // bf16/f16 (and TF32): mma.sync m16n8k16 / m16n8k8, cp.async pipeline, ldmatrix
  kMmaStaged,            // bf16/f16 with rows not 16-byte aligned (odd N or K, sliced operands): MmaTensorCore
                         // with those rows read by aligned 16-byte loads into registers, shifted, stored to smem
  kWgmmaTma,             // bf16/f16 on sm_90: wgmma fed by TMA, warp-specialised, persistent (matmul_wgmma.cuh)
  kWgmmaTf32,            // f32 DEFAULT/HIGH on sm_90: C^T = b^T a^T on TF32 wgmma, b's fragments from registers,
                         // TMA loads and stores (matmul_wgmma_tf32.cuh)
};

// The tier LaunchMatmul would use for `p` on the current device (for tests and benchmarks).
MatmulTier ChooseMatmulTier(const MatmulProblem& p);

cudaError_t LaunchMatmul(cudaStream_t stream, const MatmulProblem& p);

}  // namespace jk
