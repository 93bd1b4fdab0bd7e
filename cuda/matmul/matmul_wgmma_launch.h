// Host side of the Hopper tier (matmul_wgmma.cuh): eligibility and launch. Plain C++.
#pragma once
#include <cuda_runtime_api.h>

#include "matmul/matmul_problem.h"

namespace jk::mm {

// True when LaunchWgmmaTma can run `p` on the current device: an sm_90 device with the sm_90a kernels in
// this build, bf16/f16, K and N multiples of 8, a and b 16-byte aligned, batch strides of whole matrices,
// and the tier is on: JK_MATMUL_WGMMA=0 turns it off (the lab times the mma.sync tier beside it that way),
// any other value turns it on for every eligible shape; unset, it runs where it was measured faster (K >=
// 256 and at least 64 tiles of 128x128, or K >= 768 and 32-63 tiles with split-K; matmul_wgmma_launch.cu).
// Lab knobs, read at every launch: JK_MATMUL_WGMMA=128|256 forces a tile width, JK_MATMUL_WGMMA_EPI=row8
// sends plain matmuls through the fused epilogue instead of TMA stores (=tma / =row8 pick the fused
// epilogue's path: TMA stores from the fragment layout, or StoreRow8), JK_MATMUL_WGMMA_SCHED=pingpong|coop
// forces the ping-pong or the cooperative schedule, JK_MATMUL_WGMMA_SPLITK=1|2 turns split-K off / on for
// every shape, JK_MATMUL_WGMMA_PREFETCH=0..3 picks the fused epilogue's prefetches,
// JK_MATMUL_WGMMA_ACT=libm computes gelu/tanh-gelu/silu in their libm forms (erff, tanhf, expf),
// JK_MATMUL_WGMMA_BOXED=0 keeps fused epilogues on the general TMA-store form (no TMA-loaded residual, no bias
// folded into the accumulators, no shared last tile).
bool WgmmaTmaEligible(const MatmulProblem& p);

// Builds the two tensor maps and launches the persistent kernel (or, with split-K, clusters of 2 CTAs per
// tile) on `stream`. cudaErrorNotSupported (before
// any launch) when the driver refuses a tensor map: the caller falls back to another tier.
cudaError_t LaunchWgmmaTma(cudaStream_t stream, const MatmulProblem& p);

}  // namespace jk::mm
