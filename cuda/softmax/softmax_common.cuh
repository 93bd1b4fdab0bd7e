// Softmax / log-softmax kernels. Device code only; softmax_launch.cu picks the tier by row length.
//
// Numerics, identical in every tier (and in the CPU twin):
//   m = max over live entries (masked entries read as -inf), s = sum exp(x - m), float32 throughout;
//   softmax = exp(x - m) / s, log_softmax = (x - m) - log(s).
//   A row is "degenerate" when m is not finite (no live entry, every live entry -inf, or a +inf) or s is
//   NaN (a live NaN): then, as jax.nn computes it, every live output is NaN and every masked output is
//   0 (softmax) or -inf (log_softmax). Checking this once per row keeps the per-element path branch-free.
// This file: the numerics' building blocks and constants every tier shares. The tiers: softmax_warp.cuh,
// softmax_block.cuh, softmax_two_pass.cuh (all three included by softmax_kernels.cuh), softmax_long.cuh,
// softmax_cluster.cuh, softmax_columns.cuh.
#pragma once
#include <cooperative_groups.h>
#include <math_constants.h>

#include <cstdint>
#include <type_traits>

#include "common/bulk_copy.cuh"
#include "common/device.cuh"
#include "softmax/softmax_launch.h"

namespace jk::softmax {

namespace cg = cooperative_groups;

constexpr float kLog2e = 1.4426950408889634f;
constexpr int kWarpRowsBlock = 128;  // threads per block of the warp-per-row tier
constexpr int kBlockRowsMaxThreads = 512;  // widest CTA of the block tier
constexpr int kTwoPassBlock = 512;   // threads per block of the two-pass tier
constexpr int kColumnsBlock = 256;   // threads per block of the columns tier

__device__ __forceinline__ float Exp2(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}

// exp(v - m). Subtracting first keeps x - m exact near the max; fma(v, log2e, -m * log2e) would lose
// |v| ulps of the exponent (1e-3 relative error at |x| = 1e4).
__device__ __forceinline__ float ExpShifted(float v, float m) { return Exp2((v - m) * kLog2e); }

// Approximate log2 (MUFU), for s >= 1 only (the sum of a non-degenerate row); RcpApprox: common/device.cuh.
__device__ __forceinline__ float Log2Approx(float v) {
  float r;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}
constexpr float kLn2 = 0.6931471805599453f;

__device__ __forceinline__ bool Degenerate(float m, float s) { return !isfinite(m) || isnan(s); }

__device__ __forceinline__ float MaskedValue(bool log) { return log ? -CUDART_INF_F : 0.f; }

// Online (running max, running sum) update with one element; -inf (masked) entries are skipped so an
// empty prefix (m = -inf) never produces -inf - -inf = NaN.
__device__ __forceinline__ void OnlineAdd(float& m, float& s, float v) {
  if (v > m) {
    s = s * ExpShifted(m, v) + 1.f;
    m = v;
  } else if (!(v == -CUDART_INF_F)) {
    s += ExpShifted(v, m);  // a NaN lands here and poisons s
  }
}

// Merges two (max, sum) partials; two empty partials stay (-inf, 0) (or NaN when one carries a NaN). One
// exponential: the partial with the larger max keeps its sum, the other's is scaled by exp(-|m - m2|) (the
// same value as exp(its max - the max)); written as fma(smaller's sum, e, larger's sum) either way round, so
// merging a with b and b with a give the same bits (every lane of a butterfly ends with the same pair).
__device__ __forceinline__ void MergeStats(float& m, float& s, float m2, float s2) {
  const float mm = fmaxf(m, m2);
  const float e = Exp2(-fabsf(m - m2) * kLog2e);  // NaN for two +inf maxima: s NaN, a degenerate row
  s = (mm == -CUDART_INF_F) ? s + s2 : (m >= m2 ? fmaf(s2, e, s) : fmaf(s, e, s2));
  m = mm;
}

// Every thread's (max, sum) pair merged over the CTA: shuffles, then one value per warp through sm / ss.
__device__ __forceinline__ void BlockAllReduceStats(float& m, float& s, float* sm, float* ss) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
#pragma unroll
  for (int k = 16; k > 0; k /= 2) MergeStats(m, s, __shfl_xor_sync(0xffffffffu, m, k), __shfl_xor_sync(0xffffffffu, s, k));
  __syncthreads();  // sm/ss may still be read by the previous row
  if (lane == 0) {
    sm[warp] = m;
    ss[warp] = s;
  }
  __syncthreads();
  // The warps' pairs merged by a butterfly in every warp (log2(warps) dependent merges instead of warps - 1),
  // over the lanes below the next power of two of warps only: the lanes above it never meet the others, so
  // every thread takes lane 0's pair (every warp computes it from the same values in the same order).
  m = lane < warps ? sm[lane] : -CUDART_INF_F;
  s = lane < warps ? ss[lane] : 0.f;
#pragma unroll
  for (int k = 16; k > 0; k /= 2) {
    if (k < warps) MergeStats(m, s, __shfl_xor_sync(0xffffffffu, m, k), __shfl_xor_sync(0xffffffffu, s, k));
  }
  m = __shfl_sync(0xffffffffu, m, 0);
  s = __shfl_sync(0xffffffffu, s, 0);
}

template <typename T, int kVec>
__device__ __forceinline__ void LoadPack(const T* p, float* v) {
  using Raw = typename RawVec<sizeof(T) * kVec>::type;
  const Raw raw = *reinterpret_cast<const Raw*>(p);
  Pack<T, kVec> pk;
  memcpy(&pk, &raw, sizeof(raw));
#pragma unroll
  for (int k = 0; k < kVec; ++k) v[k] = ToFloat(pk.v[k]);
}

// The store is spelled in PTX for 16- and 8-byte packs: even through uint4, nvcc split the block tiers'
// stores into 4-byte pieces (PTX st.global.v2.u16; scalar 2-byte stores in an earlier build, which held
// 16-bit types to ~1.2 TB/s on an H200).
__device__ __forceinline__ void StoreRaw(void* p, uint4 r) {
  asm("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(r.x), "r"(r.y), "r"(r.z), "r"(r.w));
}
__device__ __forceinline__ void StoreRaw(void* p, uint2 r) {
  asm("st.global.v2.b32 [%0], {%1, %2};" ::"l"(p), "r"(r.x), "r"(r.y));
}
__device__ __forceinline__ void StoreRaw(void* p, uint32_t r) { *static_cast<uint32_t*>(p) = r; }
__device__ __forceinline__ void StoreRaw(void* p, uint16_t r) { *static_cast<uint16_t*>(p) = r; }

template <typename T, int kVec>
__device__ __forceinline__ void StorePack(T* p, const float* v) {
  using Raw = typename RawVec<sizeof(T) * kVec>::type;
  Pack<T, kVec> pk;
#pragma unroll
  for (int k = 0; k < kVec; ++k) pk.v[k] = FromFloat<T>(v[k]);
  Raw raw;
  memcpy(&raw, &pk, sizeof(raw));
  StoreRaw(p, raw);
}

// A 16-bit type's pair type and the bits of its -inf (the warp tier's loads and the packed tiers).
template <typename T>
struct Pair;
template <>
struct Pair<__nv_bfloat16> {
  using type = __nv_bfloat162;
  static constexpr uint16_t kNegInf = 0xFF80;
};
template <>
struct Pair<__half> {
  using type = __half2;
  static constexpr uint16_t kNegInf = 0xFC00;
};

// A pack of x at p, or -inf where !ok (past the row or the last row), for the warp tier, whose short L2-resident
// rows are bound by instructions. 16-bit packs choose on the raw 32-bit words (one move per word where !ok, not
// one per element, and unpredicated conversions after) and convert them with Unpack2 (bfloat16: a shift and a
// mask; plain C++, not ToFloat2's volatile asm, whose fixed placement the packed tiers need and this tier does
// not). Other packs: LoadPack.
template <typename T, int kVec>
__device__ __forceinline__ void LoadPackOrNegInf(const T* p, bool ok, float* v) {
  if constexpr (sizeof(T) == 2 && kVec % 2 == 0) {
    using Raw = typename RawVec<sizeof(T) * kVec>::type;
    uint32_t w[kVec / 2];
    if (ok) {
      const Raw raw = *reinterpret_cast<const Raw*>(p);
      memcpy(w, &raw, sizeof(raw));
    } else {
#pragma unroll
      for (int k = 0; k < kVec / 2; ++k) w[k] = uint32_t(Pair<T>::kNegInf) * 0x10001u;
    }
#pragma unroll
    for (int k = 0; k < kVec / 2; ++k) {
      const float2 f = Unpack2<T>(w[k]);
      v[2 * k] = f.x;
      v[2 * k + 1] = f.y;
    }
  } else if (ok) {
    LoadPack<T, kVec>(p, v);
  } else {
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = -CUDART_INF_F;
  }
}

// Live flags of kVec consecutive entries along the axis starting at `col`. The launcher only picks kVec > 1
// when the mask is contiguous along the axis and every row offset is a multiple of kVec.
template <int kVec>
__device__ __forceinline__ void LoadLive(const MaskIndex& mask, int64_t row_offset, int64_t col, bool* live) {
  if constexpr (kVec == 1) {
    live[0] = mask.data[row_offset + col * mask.axis_stride] != 0;
  } else {
    using Raw = typename RawVec<kVec>::type;
    const Raw raw = *reinterpret_cast<const Raw*>(mask.data + row_offset + col);
    uint8_t bytes[kVec];
    memcpy(bytes, &raw, kVec);
#pragma unroll
    for (int k = 0; k < kVec; ++k) live[k] = bytes[k] != 0;
  }
}

template <int kVec>
__device__ __forceinline__ void ApplyMask(const MaskIndex& mask, int64_t row_offset, int64_t col, float* v) {
  bool live[kVec];
  LoadLive<kVec>(mask, row_offset, col, live);
#pragma unroll
  for (int k = 0; k < kVec; ++k) v[k] = live[k] ? v[k] : -CUDART_INF_F;
}

// Output pack of a degenerate row: NaN where live, the masked value elsewhere (the mask is re-read: this
// path is rare and keeping the flags in registers would cost every row).
template <typename T, int kVec, bool kMask>
__device__ __forceinline__ void StoreDegenerate(T* yp, const MaskIndex& mask, int64_t row_offset, int64_t col,
                                                bool log) {
  bool live[kVec];
#pragma unroll
  for (int k = 0; k < kVec; ++k) live[k] = true;
  if constexpr (kMask) LoadLive<kVec>(mask, row_offset, col, live);
  float o[kVec];
#pragma unroll
  for (int k = 0; k < kVec; ++k) o[k] = live[k] ? CUDART_NAN_F : MaskedValue(log);
  StorePack<T, kVec>(yp, o);
}

}  // namespace jk::softmax
