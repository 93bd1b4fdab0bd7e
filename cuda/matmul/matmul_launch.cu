// Tier selection and launches for jk_matmul / jk_linear.
//
// Tiers (first match wins):
//   K == 0                                      SimtTiled (writes the epilogue of a zero accumulator)
//   M <= 8, N % 8 == 0, b 16-byte aligned       SkinnyM (bandwidth-bound decode shapes)
//   bf16/f16, K % 8 == 0, N % 8 == 0, aligned   MmaTensorCore (16-byte cp.async rows)
//   f32 DEFAULT/HIGH, K % 4, N % 4, aligned     MmaTensorCore with TF32 inputs (as XLA does)
//   f32, K % 4 == 0, N % 4 == 0, aligned        SimtRegisterBlocked 128x128 (64x64 when 128-tiles
//                                               would leave most SMs idle)
//   anything else (odd strides, misaligned)     SimtTiled
#include <algorithm>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/launch.h"
#include "matmul/matmul_launch.h"
#include "matmul/matmul_mma.cuh"
#include "matmul/matmul_simt.cuh"

namespace jk {
namespace {

constexpr int64_t kMaxGridYZ = 65535;

bool Aligned16(const void* ptr) { return ptr == nullptr || reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

// Both operands can be read in 16-byte rows: `elems` elements per 16 bytes.
bool VectorRows(const MatmulProblem& p, int64_t elems) {
  return p.k % elems == 0 && p.n % elems == 0 && Aligned16(p.a) && Aligned16(p.b);
}

int64_t ElementBytes(DType t) { return t == DType::kF32 ? 4 : 2; }

dim3 Grid(const MatmulProblem& p, int64_t bm, int64_t bn) {
  return dim3(static_cast<unsigned>(CeilDiv(p.n, bn)),
              static_cast<unsigned>(std::min(CeilDiv(p.m, bm), kMaxGridYZ)),
              static_cast<unsigned>(std::min(p.batch_count, kMaxGridYZ)));
}

template <typename F32, typename BF16, typename F16, typename Fn>
cudaError_t Dispatch(DType t, Fn&& fn) {
  return DispatchFloat<F32, BF16, F16>(t, cudaErrorInvalidValue, fn);
}

}  // namespace

MatmulTier ChooseMatmulTier(const MatmulProblem& p) {
  const int64_t vec = 16 / ElementBytes(p.dtype);
  if (p.k == 0) return MatmulTier::kSimtTiled;
  if (p.m <= mm::kSkinnyMaxM && p.n % 8 == 0 && Aligned16(p.b)) return MatmulTier::kSkinnyM;
  if (p.dtype != DType::kF32 && VectorRows(p, vec)) return MatmulTier::kMmaTensorCore;
  if (p.dtype == DType::kF32 && p.precision != MatmulPrecision::kHighest && VectorRows(p, vec))
    return MatmulTier::kMmaTensorCore;
  if (p.dtype == DType::kF32 && VectorRows(p, vec)) return MatmulTier::kSimtRegisterBlocked;
  return MatmulTier::kSimtTiled;
}

cudaError_t LaunchMatmul(cudaStream_t stream, const MatmulProblem& p) {
  const dim3 block(mm::kSimtThreads);
  switch (ChooseMatmulTier(p)) {
    case MatmulTier::kSimtTiled:
      return Dispatch<float, __nv_bfloat16, __half>(p.dtype, [&](auto tag) {
        mm::SimtTiledKernel<typename decltype(tag)::type><<<Grid(p, 64, 64), block, 0, stream>>>(p);
        return LastLaunchError();
      });
    case MatmulTier::kSkinnyM: {
      const dim3 grid(static_cast<unsigned>(CeilDiv(p.n, mm::kSkinnyCols)), 1,
                      static_cast<unsigned>(std::min(p.batch_count, kMaxGridYZ)));
      return Dispatch<float, __nv_bfloat16, __half>(p.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (p.m <= 1) mm::SkinnyMKernel<T, 1><<<grid, block, 0, stream>>>(p);
        else if (p.m <= 2) mm::SkinnyMKernel<T, 2><<<grid, block, 0, stream>>>(p);
        else if (p.m <= 4) mm::SkinnyMKernel<T, 4><<<grid, block, 0, stream>>>(p);
        else mm::SkinnyMKernel<T, 8><<<grid, block, 0, stream>>>(p);
        return LastLaunchError();
      });
    }
    case MatmulTier::kMmaTensorCore:
      return mm::LaunchMma(stream, p);
    case MatmulTier::kSimtRegisterBlocked: {
      // 128x128 tiles need ~2 waves of blocks to beat 64x64 tiles' better balance.
      const int64_t big_tiles = CeilDiv(p.m, 128) * CeilDiv(p.n, 128) * p.batch_count;
      if (big_tiles >= 2 * NumSMs()) {
        mm::SimtRegisterBlockedKernel<128, 128, 8, 8><<<Grid(p, 128, 128), block, 0, stream>>>(p);
      } else {
        mm::SimtRegisterBlockedKernel<64, 64, 4, 4><<<Grid(p, 64, 64), block, 0, stream>>>(p);
      }
      return LastLaunchError();
    }
  }
  return cudaErrorInvalidValue;
}

}  // namespace jk
