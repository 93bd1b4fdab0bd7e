// Tier selection and launches for jk_matmul / jk_linear.
//
// Tiers (first match wins):
//   K == 0                                      SimtTiled (writes the epilogue of a zero accumulator)
//   M <= 8, N % 8 == 0, b 16-byte aligned       SkinnyM (bandwidth-bound decode shapes)
//   bf16/f16 on sm_90, K % 8, N % 8, aligned,   WgmmaTma (TMA + wgmma; JK_MATMUL_WGMMA=0 opts out,
//     batch strides of whole matrices,            =1 forces it for any size)
//     K >= 1000, >= 64 tiles of 128x128
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
#include "matmul/matmul_mma_launch.cuh"
#include "matmul/matmul_simt.cuh"
#include "matmul/matmul_wgmma_launch.h"

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
  if (p.dtype != DType::kF32 && VectorRows(p, vec) && mm::WgmmaTmaEligible(p)) return MatmulTier::kWgmmaTma;
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
    case MatmulTier::kWgmmaTma:
      // A tensor map the driver refuses falls through to the mma.sync tier, which takes the same shapes.
      if (cudaError_t e = mm::LaunchWgmmaTma(stream, p); e != cudaErrorNotSupported) return e;
      [[fallthrough]];
    case MatmulTier::kMmaTensorCore:
      return Dispatch<float, __nv_bfloat16, __half>(p.dtype, [&](auto tag) {
        return mm::LaunchMma<typename decltype(tag)::type>(stream, p);
      });
    case MatmulTier::kSimtRegisterBlocked: {
      // The largest tile that still leaves no SM idle: 128x128 tiles need ~2 waves of blocks to beat
      // 64x64 tiles' better balance; below one wave of 64x64 tiles, 32x64 tiles (2x4 per thread) with
      // BK = 32: with one block per SM the k loop is a chain of global latencies, so fewer, longer steps.
      auto tiles = [&](int64_t bm, int64_t bn) { return CeilDiv(p.m, bm) * CeilDiv(p.n, bn) * p.batch_count; };
      const int64_t sms = NumSMs();
      if (tiles(128, 128) >= 2 * sms) {
        mm::SimtRegisterBlockedKernel<128, 128, 8, 8, 16, 1><<<Grid(p, 128, 128), block, 0, stream>>>(p);
      } else if (tiles(64, 64) >= sms) {
        mm::SimtRegisterBlockedKernel<64, 64, 4, 4, 16, 2><<<Grid(p, 64, 64), block, 0, stream>>>(p);
      } else {
        mm::SimtRegisterBlockedKernel<32, 64, 2, 4, 32, 2><<<Grid(p, 32, 64), block, 0, stream>>>(p);
      }
      return LastLaunchError();
    }
  }
  return cudaErrorInvalidValue;
}

}  // namespace jk
