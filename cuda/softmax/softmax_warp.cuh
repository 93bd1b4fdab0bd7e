// Softmax / log-softmax tier 1: a sub-warp or warp per row, the row in registers. Numerics: softmax_common.cuh.
#pragma once
#include "softmax/softmax_common.cuh"

namespace jk::softmax {

// ---- tier 1: sub-warp / warp per row, the row in registers ------------------------------------------
// kWidth lanes share a row (kWidth < 32: several rows per warp access, so short rows still issue full
// 16-byte accesses from every lane); each lane holds kPacks packs of kVec elements per row and kRows rows.
// The loop trip count is warp-uniform because the shuffles need every lane of the warp.
//
// `log` is a template parameter here (not a kernel argument as in the other tiers): short rows are bound by
// instructions, not bytes, when they sit in L2 (49152 x 128 16-bit: ~19 SASS instructions per element with
// a runtime flag, one FSEL per element plus both output paths), and the per-row log / reciprocal use the
// approximate MUFU forms (s >= 1 on every non-degenerate row: lg2.approx's absolute error ~2^-22, rcp.approx
// 1 ulp), which the full-range logf (~20 instructions per lane and row) cost 2.5 instructions per element
// at 8 elements per lane.
template <typename T, int kVec, int kPacks, int kWidth, int kRows, bool kMask, bool kLog>
__global__ void __launch_bounds__(kWarpRowsBlock)
    WarpRowsKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int n, MaskIndex mask) {
  constexpr bool log = kLog;
  constexpr int kElems = kPacks * kVec;
  constexpr int kRowsPerWarp = (32 / kWidth) * kRows;
  const int lane = threadIdx.x % kWidth;
  const int group = (threadIdx.x % 32) / kWidth;
  const int64_t warp = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int64_t warps = int64_t(gridDim.x) * blockDim.x / 32;
  for (int64_t base = warp * kRowsPerWarp; base < rows; base += warps * kRowsPerWarp) {
    float v[kRows][kElems], m[kRows], s[kRows];
    int64_t moff[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int64_t row = base + group * kRows + r;
      const bool valid = row < rows;
      moff[r] = (kMask && valid) ? mask.outer.Offset(row) : 0;
      m[r] = -CUDART_INF_F;
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const int col = (p * kWidth + lane) * kVec;
        float* vp = &v[r][p * kVec];
        const bool ok = valid && col < n;
        LoadPackOrNegInf<T, kVec>(x + row * n + col, ok, vp);
        if constexpr (kMask) {
          if (ok) ApplyMask<kVec>(mask, moff[r], col, vp);
        }
#pragma unroll
        for (int k = 0; k < kVec; ++k) m[r] = fmaxf(m[r], vp[k]);
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) m[r] = WarpAllReduce<kWidth>(m[r], MaxOp());
    // Keep exp(x - m) (softmax) or x - m (log_softmax) in place: one exp per element either way.
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      s[r] = 0.f;
#pragma unroll
      for (int e = 0; e < kElems; ++e) {
        const float t = v[r][e] - m[r];
        const float ex = Exp2(t * kLog2e);
        s[r] += ex;
        v[r][e] = log ? t : ex;
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) s[r] = WarpAllReduce<kWidth>(s[r], SumOp());
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int64_t row = base + group * kRows + r;
      if (row >= rows) continue;
      T* yr = y + row * n;
      if (Degenerate(m[r], s[r])) {
#pragma unroll
        for (int p = 0; p < kPacks; ++p) {
          const int col = (p * kWidth + lane) * kVec;
          if (col < n) StoreDegenerate<T, kVec, kMask>(yr + col, mask, moff[r], col, log);
        }
        continue;
      }
      const float a = log ? Log2Approx(s[r]) * kLn2 : RcpApprox(s[r]);
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const int col = (p * kWidth + lane) * kVec;
        if (col >= n) continue;
        float o[kVec];
#pragma unroll
        for (int k = 0; k < kVec; ++k) o[k] = log ? v[r][p * kVec + k] - a : v[r][p * kVec + k] * a;
        StorePack<T, kVec>(yr + col, o);
      }
    }
  }
}

}  // namespace jk::softmax
