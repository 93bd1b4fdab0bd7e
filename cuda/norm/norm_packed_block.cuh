// bf16/f16 rows of 512-32768 columns (LayerNorm / RMSNorm), the row held PACKED in registers: each thread
// keeps its kPacks 16-byte packs as raw words (8 elements in 4 registers) and converts them to float32 on
// the fly in every pass, instead of holding 8 floats per pack. Device code only; the launcher is
// norm_packed_block.cu.
//
// Why: the register tiers these rows took before (lane groups, BlockPerRowRegisters, the bulk-copy tier,
// two reads at >= 16384) keep the row converted to float32 and sit at the register cap, so few bytes are
// in flight per SM (16-bit LayerNorm 71-88% of the copy ceiling on an H200, RMSNorm behind jnp at
// 2048-8192 columns). Softmax solved the same problem this way (softmax_kernels.cuh,
// BlockRowsPackedKernel): 32 packed elements per thread cost 16 registers, so a cap of 40 keeps three
// CTAs of 512 threads (96 KB of loads in flight) per SM.
//
// Two layouts, one body:
//   kWarpRow = false  a CTA per row (grid-stride over rows), blockDim.x threads x kPacks packs, block
//                     reductions;
//   kWarpRow = true   a warp per row, 32 lanes x kPacks packs (rows of up to 256 * kPacks columns),
//                     warp-shuffle reductions, blockDim.x / 32 rows per CTA.
// Pack k of a thread is columns (k * lanes + t) * 8 ... + 7 (coalesced per pass). Padding packs hold the
// row's shift (LayerNorm: x[row, 0]'s bits in every half, so they add nothing to the shifted sum; RMSNorm:
// 0), and the squared-deviation pass and the stores skip them.
// Statistics as in every tier: LayerNorm takes two exact passes over the register-resident row of the data
// shifted by the row's first element (RowShift in norm_kernels.cuh), in float32; RMSNorm the sum of squares.
// scale/bias (row ScaleRow(p, row): grouped parameters work unchanged) are loaded as 16-byte packs in the
// output pass and converted on the fly; absent ones are 1 and 0.
#pragma once
#include <cstring>
#include <type_traits>

#include "norm/norm_kernels.cuh"
#include "norm/norm_short_packed.cuh"

namespace jk::norm {

constexpr int kPackedBlockMaxThreads = 512;

// Two 16-bit values of one word as float32. Volatile asm for bf16 (a shift and a mask), as softmax's
// ToFloat2: as plain C++ ptxas merged the conversions of different passes and kept the float32 copies
// live across the block reductions (spills under the register cap).
template <typename T>
__device__ __forceinline__ float2 UnpackPinned(uint32_t w) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    uint32_t lo, hi;
    asm volatile("shl.b32 %0, %2, 16;\n\tand.b32 %1, %2, 0xFFFF0000;" : "=r"(lo), "=r"(hi) : "r"(w));
    return make_float2(__uint_as_float(lo), __uint_as_float(hi));
  } else {
    return Unpack2<T>(w);
  }
}

// The same values by other instructions: ptxas (which sees through volatile asm) would otherwise merge
// the conversions of the three passes and keep 2 * kPacks * 4 floats live across the reductions between
// them (the warp-row LayerNorm spilled 136-176 bytes at 32 elements per lane). kForm 1: byte permutes
// (bf16) or the halves swapped (f16); kForm 2: the same with other, equivalent selectors.
template <typename T, int kForm>
__device__ __forceinline__ float2 UnpackAgain(uint32_t w) {
  static_assert(kForm == 1 || kForm == 2, "two alternative forms");
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    uint32_t lo, hi;
    if constexpr (kForm == 1) {
      asm volatile("prmt.b32 %0, %2, 0, 0x1044;\n\tprmt.b32 %1, %2, 0, 0x3244;" : "=r"(lo), "=r"(hi) : "r"(w));
    } else {
      asm volatile("prmt.b32 %0, %2, 0, 0x1055;\n\tprmt.b32 %1, %2, 0, 0x3255;" : "=r"(lo), "=r"(hi) : "r"(w));
    }
    return make_float2(__uint_as_float(lo), __uint_as_float(hi));
  } else {
    const uint32_t swapped = kForm == 1 ? __byte_perm(w, 0, 0x1032) : __byte_perm(w, w, 0x5432);
    const float2 f = Unpack2<T>(swapped);
    return make_float2(f.y, f.x);
  }
}

template <int kLanes>
__device__ __forceinline__ float RowSum(float v, float* scratch) {
  if constexpr (kLanes == 32) return WarpAllReduce<32>(v, SumOp());
  else return BlockAllReduce(v, SumOp(), scratch);
}

// The output pack of a packed row at column `col` (8 elements): LayerNorm (x - mean) * rstd * scale + bias,
// RMSNorm x * rstd * scale, with the scale pack given (StorePackedNormalized below: loaded, absent: 1), the bias
// pack loaded here (absent: 0), both converted on the fly.
template <typename T, Kind K>
__device__ __forceinline__ void StorePackedNormalizedGB(T* yr, const uint4& x, const uint4& g, const uint4& b, int col,
                                                        float mean, float rstd) {
  uint32_t o[4];
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    const float2 f = UnpackAgain<T, 2>(Word(x, w));
    const float2 gf = UnpackPinned<T>(Word(g, w));
    if constexpr (K == Kind::kLayerNorm) {
      const float2 bf = UnpackPinned<T>(Word(b, w));
      o[w] = Pack2<T>(fmaf((f.x - mean) * rstd, gf.x, bf.x), fmaf((f.y - mean) * rstd, gf.y, bf.y));
    } else {
      o[w] = Pack2<T>(f.x * rstd * gf.x, f.y * rstd * gf.y);
    }
  }
  *reinterpret_cast<uint4*>(yr + col) = make_uint4(o[0], o[1], o[2], o[3]);
}
template <typename T, Kind K>
__device__ __forceinline__ void StorePackedNormalizedWith(T* yr, const uint4& x, const uint4& g, const T* bias,
                                                          int col, float mean, float rstd) {
  uint4 b = make_uint4(0, 0, 0, 0);
  if (K == Kind::kLayerNorm && bias != nullptr) b = LoadWords(bias + col);
  StorePackedNormalizedGB<T, K>(yr, x, g, b, col, mean, rstd);
}
template <typename T, Kind K>
__device__ __forceinline__ void StorePackedNormalized(T* yr, const uint4& x, const T* scale, const T* bias, int col,
                                                      float mean, float rstd) {
  const uint4 g = scale != nullptr ? LoadWords(scale + col) : make_uint4(kOnePair<T>, kOnePair<T>, kOnePair<T>, kOnePair<T>);
  StorePackedNormalizedWith<T, K>(yr, x, g, bias, col, mean, rstd);
}

// kMinBlocks: the CTAs of 512 threads per SM the register cap must allow (3: <= 40 registers, 2: <= 64,
// 4: <= 32).
template <typename T, Kind K, int kPacks, int kMinBlocks, bool kWarpRow>
__global__ void __launch_bounds__(kPackedBlockMaxThreads, kMinBlocks) BlockPerRowPacked(Params<T> p) {
  static_assert(sizeof(T) == 2, "16-bit types only");
  constexpr int kP = 8;  // elements per 16-byte pack
  __shared__ float scratch[32];
  const int64_t rows = p.outer, n = p.n;
  const int lanes = kWarpRow ? 32 : static_cast<int>(blockDim.x);
  const int t = kWarpRow ? static_cast<int>(threadIdx.x % 32) : static_cast<int>(threadIdx.x);
  const int64_t rows_per_cta = kWarpRow ? blockDim.x / 32 : 1;
  const int64_t first = kWarpRow ? blockIdx.x * rows_per_cta + threadIdx.x / 32 : blockIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * rows_per_cta;
  const float inv_n = 1.f / static_cast<float>(n);
  const int ncols = static_cast<int>(n);  // <= 32768 (the launcher checks)
  // The loop bound is uniform per warp (warp rows) or per CTA (block rows): the reductions are collective.
  for (int64_t row = first; row < rows; row += step) {
    const T* xr = p.x + row * n;
    uint32_t pad = 0;
    float shift = 0.f;
    if constexpr (K == Kind::kLayerNorm) {
      const uint16_t bits = *reinterpret_cast<const uint16_t*>(xr);
      pad = uint32_t{bits} * 0x10001u;
      shift = UnpackPinned<T>(pad).x;
    }
    uint4 raw[kPacks];
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int col = (k * lanes + t) * kP;
      raw[k] = col < ncols ? LoadWords(xr + col) : make_uint4(pad, pad, pad, pad);
    }
    // Pass 1: the sum of the shifted data (LayerNorm) or of squares (RMSNorm), two accumulators.
    float s0 = 0.f, s1 = 0.f;
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        const float2 f = UnpackPinned<T>(Word(raw[k], w));
        if constexpr (K == Kind::kLayerNorm) {
          s0 += f.x - shift;
          s1 += f.y - shift;
        } else {
          s0 = fmaf(f.x, f.x, s0);
          s1 = fmaf(f.y, f.y, s1);
        }
      }
    }
    const float sum = RowSum<kWarpRow ? 32 : 0>(s0 + s1, scratch);
    float mean = 0.f, rstd;
    if constexpr (K == Kind::kLayerNorm) {
      const float shifted_mean = sum * inv_n;
      mean = shift + shifted_mean;
      float q0 = 0.f, q1 = 0.f;
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        const int col = (k * lanes + t) * kP;
        if (col < ncols) {  // padding would add shifted_mean^2
#pragma unroll
          for (int w = 0; w < 4; ++w) {
            const float2 f = UnpackAgain<T, 1>(Word(raw[k], w));
            const float d0 = (f.x - shift) - shifted_mean, d1 = (f.y - shift) - shifted_mean;
            q0 = fmaf(d0, d0, q0);
            q1 = fmaf(d1, d1, q1);
          }
        }
      }
      rstd = RstdFrom(RowSum<kWarpRow ? 32 : 0>(q0 + q1, scratch) * inv_n, p.epsilon);
    } else {
      rstd = RstdFrom(sum * inv_n, p.epsilon);
    }
    // Output pass: parameters as 16-byte packs, converted on the fly. The compiler barrier keeps their
    // loads after the reductions: hoisted above the warp shuffles (no bar.sync to stop them), the
    // parameter packs of every pack live next to the row (the warp-row LayerNorm spilled 160-176 bytes
    // at 32 elements per lane).
    asm volatile("" ::: "memory");
    const T* scale = ScaleRow(p, row);
    const T* bias = K == Kind::kLayerNorm ? BiasRow(p, row) : nullptr;
    T* yr = p.y + row * n;
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int col = (k * lanes + t) * kP;
      if (col < ncols) StorePackedNormalized<T, K>(yr, raw[k], scale, bias, col, mean, rstd);
    }
    if (t == 0 && p.mean != nullptr) {
      p.mean[row] = mean;
      p.rstd[row] = rstd;
    }
  }
}

}  // namespace jk::norm
