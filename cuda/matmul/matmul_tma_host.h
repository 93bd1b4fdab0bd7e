// Host helpers of the Hopper (TMA + wgmma) tiers, shared by matmul_wgmma_launch.cu and
// matmul_wgmma_tf32.cu: the driver's tensor-map encoder (common/tma_host.h), 3-d tensor maps over a batch of
// matrices, the batch count an operand's buffer holds, the shared shape checks, and whether the device runs wgmma
// code. Host code only (included by .cu files).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/launch.h"
#include "common/tma_host.h"
#include "matmul/matmul_problem.h"

namespace jk::mm::tma {

using jk::EncodeTiled;  // common/tma_host.h
using jk::EncodeTiledFn;

// The L2 promotion of a tensor map over rows of `pitch` bytes: 256-byte where rows start on 128-byte
// boundaries, 128-byte where they do not. H200 (bench/lab/matmul_pitch2_h200.md, bf16, us): 4096x1000x4096
// 62.2 with 256-byte promotion against 52.6 with 128, 64 or none (jnp 45.4), 4096x1016x4096 60.1 / 53.1,
// 1024x1024x1000 9.7 / 8.7; aligned rows 45.7 / 45.6 (4096x1024x4096), and 4096x1008x4096 (rows 96 bytes off)
// 46.1 either way. JK_MATMUL_TMA_L2=none|64|128|256 (read at every launch) forces one (for the lab).
inline CUtensorMapL2promotion L2Promotion(int64_t pitch) {
  const char* env = std::getenv("JK_MATMUL_TMA_L2");
  if (env == nullptr) return pitch % 128 == 0 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  if (std::strcmp(env, "none") == 0) return CU_TENSOR_MAP_L2_PROMOTION_NONE;
  if (std::strcmp(env, "64") == 0) return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
  if (std::strcmp(env, "128") == 0) return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
}

// A 3-d tensor map over `count` contiguous (rows, cols) matrices of `elem_bytes`-byte elements, box
// (box_rows, box_cols) with the 128-byte swizzle (L2Promotion by the row pitch); out-of-bounds elements read as
// zero and are not written.
inline bool EncodeMatrices3d(CUtensorMap* map, CUtensorMapDataType type, int elem_bytes, const void* base,
                             int64_t rows, int64_t cols, int64_t count, uint32_t box_rows, uint32_t box_cols) {
  EncodeTiledFn encode = EncodeTiled();
  if (encode == nullptr) return false;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(count)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(cols) * elem_bytes,
                                 static_cast<cuuint64_t>(rows * cols) * elem_bytes};
  const cuuint32_t box[3] = {box_cols, box_rows, 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  return encode(map, type, 3, const_cast<void*>(base), dims, strides, box, elem_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, L2Promotion(cols * elem_bytes),
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Matrices an operand's buffer holds: 1 + the largest batch offset in whole matrices (0 when a batch
// stride is not a whole number of matrices: the tiers do not apply).
inline int64_t MatrixCount(const MatmulProblem& p, const int64_t* stride, int64_t matrix) {
  int64_t last = 0;
  for (int d = 0; d < p.batch_rank; ++d) {
    if (stride[d] % matrix != 0) return 0;
    last += (p.batch_dims[d] - 1) * (stride[d] / matrix);
  }
  return last + 1;
}

// The shape and layout constraints every TMA tier shares: coordinates within signed 32 bits (a tile's last box
// starts up to 255 past the edge), 16-byte global strides (K and N multiples of `vec` elements), 16-byte
// aligned a, b and out (TMA rows, and the epilogues' vector stores), and batch strides of whole matrices.
inline bool ProblemFits(const MatmulProblem& p, int64_t vec) {
  constexpr int64_t kMaxCoord = (int64_t{1} << 31) - 1024;
  if (p.m <= 0 || p.n <= 0 || p.k <= 0 || p.m >= kMaxCoord || p.n >= kMaxCoord || p.k >= kMaxCoord) return false;
  if (p.k % vec != 0 || p.n % vec != 0) return false;
  if (reinterpret_cast<uintptr_t>(p.a) % 16 != 0 || reinterpret_cast<uintptr_t>(p.b) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(p.out) % 16 != 0)
    return false;
  const int64_t a_count = MatrixCount(p, p.a_stride, p.m * p.k), b_count = MatrixCount(p, p.b_stride, p.k * p.n);
  return a_count > 0 && b_count > 0 && a_count < kMaxCoord && b_count < kMaxCoord && p.batch_count < kMaxCoord;
}

// Whether the current device runs this build's wgmma kernels: sm_90 (wgmma exists on 9.x alone) running the
// binaries built for compute_90a, not a JIT of older PTX whose body compiled to nothing (RunsSm90Code).
inline bool DeviceRunsWgmma() { return ComputeMajor() == 9 && RunsSm90Code(); }

}  // namespace jk::mm::tma
