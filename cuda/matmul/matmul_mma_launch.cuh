// Host side of the tensor-core tier: tile configuration by problem size and the launch. Included once
// per element type by matmul_mma_{bf16,f16,tf32}.cu, so the three instantiation sets compile in parallel.
#pragma once
#include <algorithm>

#include "common/launch.h"
#include "matmul/matmul_mma.cuh"

namespace jk::mm {

// One tensor-core tile configuration: grid = tiles x batch, dynamic shared memory for the cp.async ring.
template <typename T, int BM, int BN, int WM, int WN, int STAGES, bool SA, bool SB>
cudaError_t LaunchMmaTile(cudaStream_t stream, const MatmulProblem& p) {
  using Tile = MmaTile<T, BM, BN, WM, WN, STAGES>;
  auto kernel = MmaKernel<T, BM, BN, WM, WN, STAGES, SA, SB>;
  // Above 48 KiB of dynamic shared memory needs an opt-in; a host-side attribute, legal under capture.
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Tile::kSmemBytes);
  if (e != cudaSuccess) return e;
  const dim3 grid(static_cast<unsigned>(CeilDiv(p.m, BM) * CeilDiv(p.n, BN)),
                  static_cast<unsigned>(std::min<int64_t>(p.batch_count, int64_t{65535})));
  kernel<<<grid, Tile::kThreads, Tile::kSmemBytes, stream>>>(p);
  return LastLaunchError();
}

// Tensor-core tile by problem size: the largest tile that still gives every SM a block.
//   kLarge  128x256, 8 warps of 64x64, 3 stages (81 KiB)   big GEMMs: most reuse per byte loaded
//   kMedium 128x128, 4 warps of 64x64, 4 stages (74 KiB)
//   kSmall   64x64,  4 warps of 32x32, 4 stages (38 KiB)   small or skinny problems: more blocks
// STAGED_A / STAGED_B (16-bit only): the operand's rows may be misaligned (MmaKernel's register staging);
// kMedium then runs 8 warps of 64x32.
template <typename T, bool STAGED_A, bool STAGED_B>
cudaError_t LaunchMma(cudaStream_t stream, const MatmulProblem& problem) {
  MatmulProblem p = problem;
  if constexpr (STAGED_A || STAGED_B) {  // the staged loads' bounds (IssueRow8)
    p.a_end = static_cast<const char*>(p.a) + sizeof(T) * OperandExtent(p, p.a_stride, p.m * p.k);
    p.b_end = static_cast<const char*>(p.b) + sizeof(T) * OperandExtent(p, p.b_stride, p.k * p.n);
  }
  const int64_t sms = NumSMs();
  auto tiles = [&](int64_t bm, int64_t bn) { return CeilDiv(p.m, bm) * CeilDiv(p.n, bn) * p.batch_count; };
  if (tiles(128, 256) >= sms) return LaunchMmaTile<T, 128, 256, 2, 4, 3, STAGED_A, STAGED_B>(stream, p);
  // Staged: the medium tile on 8 warps of 64x32 (4 warps of 64x64 spill with the staged rows' registers).
  constexpr int kMediumWarpsN = STAGED_A || STAGED_B ? 4 : 2;
  if (tiles(128, 128) >= sms) return LaunchMmaTile<T, 128, 128, 2, kMediumWarpsN, 4, STAGED_A, STAGED_B>(stream, p);
  return LaunchMmaTile<T, 64, 64, 2, 2, 4, STAGED_A, STAGED_B>(stream, p);
}

// Explicitly instantiated in matmul_mma_{bf16,f16,tf32}.cu (cp.async only) and
// matmul_mma_staged_{bf16,f16}.cu (register staging of b, or of a and b).
extern template cudaError_t LaunchMma<__nv_bfloat16, false, false>(cudaStream_t, const MatmulProblem&);
extern template cudaError_t LaunchMma<__half, false, false>(cudaStream_t, const MatmulProblem&);
extern template cudaError_t LaunchMma<float, false, false>(cudaStream_t, const MatmulProblem&);
extern template cudaError_t LaunchMma<__nv_bfloat16, false, true>(cudaStream_t, const MatmulProblem&);
extern template cudaError_t LaunchMma<__half, false, true>(cudaStream_t, const MatmulProblem&);
extern template cudaError_t LaunchMma<__nv_bfloat16, true, true>(cudaStream_t, const MatmulProblem&);
extern template cudaError_t LaunchMma<__half, true, true>(cudaStream_t, const MatmulProblem&);

}  // namespace jk::mm
