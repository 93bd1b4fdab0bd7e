// Softmax / log-softmax kernels. Device code only; softmax_launch.cu picks the tier by row length.
//
// Numerics, identical in every tier (and in the CPU twin):
//   m = max over live entries (masked entries read as -inf), s = sum exp(x - m), float32 throughout;
//   softmax = exp(x - m) / s, log_softmax = (x - m) - log(s).
//   A row is "degenerate" when m is not finite (no live entry, every live entry -inf, or a +inf) or s is
//   NaN (a live NaN): then, as jax.nn computes it, every live output is NaN and every masked output is
//   0 (softmax) or -inf (log_softmax). Checking this once per row keeps the per-element path branch-free.
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

// ---- tier 2: a block (or a thread-block cluster) per row, the row in registers ----------------------
// Each CTA holds blockDim.x * kPacks * kVec consecutive columns, read from DRAM once. Opt-in (lab knob):
// a cluster of C CTAs covers rows C times longer, exchanging the per-CTA max and sum through distributed
// shared memory (measured slower than one CTA per row or two passes on an H200, hence off by default).
template <typename Op>
__device__ __forceinline__ float ClusterAllReduce(float v, Op op, float* slot, unsigned ranks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) *slot = v;
  cluster.sync();  // peers' slots are written and visible
  // Same combination order on every CTA: all of them get bit-identical statistics.
  float r = *cluster.map_shared_rank(slot, 0);
  for (unsigned k = 1; k < ranks; ++k) r = op(r, *cluster.map_shared_rank(slot, k));
  return r;
  // A slot is rewritten only after the next cluster.sync, which every peer reaches after its reads.
#else
  return v;
#endif
}

template <typename T, int kVec, int kPacks, bool kMask>
__global__ void __launch_bounds__(kBlockRowsMaxThreads, 2)  // <= 64 registers, as measured
    BlockRowsKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n, MaskIndex mask,
                      bool log) {
  constexpr int kElems = kPacks * kVec;
  __shared__ float scratch[32];
  __shared__ float slots[2];  // this CTA's partial max and sum, read by its cluster peers
  unsigned rank = 0, ranks = 1;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  rank = cg::this_cluster().block_rank();
  ranks = cg::this_cluster().num_blocks();
#endif
  const int col0 = int(rank * blockDim.x) * kElems;  // n < 2^31 in this tier: 32-bit column math
  for (int64_t row = blockIdx.x / ranks; row < rows; row += gridDim.x / ranks) {
    const int64_t moff = kMask ? mask.outer.Offset(row) : 0;
    const T* xr = x + row * n;
    float v[kElems];
    float m = -CUDART_INF_F;
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
      float* vp = &v[p * kVec];
      if (col < n) {
        LoadPack<T, kVec>(xr + col, vp);
        if constexpr (kMask) ApplyMask<kVec>(mask, moff, col, vp);
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k) vp[k] = -CUDART_INF_F;
      }
#pragma unroll
      for (int k = 0; k < kVec; ++k) m = fmaxf(m, vp[k]);
    }
    m = BlockAllReduce(m, MaxOp(), scratch);
    if (ranks > 1) m = ClusterAllReduce(m, MaxOp(), &slots[0], ranks);
    float s = 0.f;
#pragma unroll
    for (int e = 0; e < kElems; ++e) {
      const float t = v[e] - m;
      const float ex = Exp2(t * kLog2e);
      s += ex;
      v[e] = log ? t : ex;
    }
    s = BlockAllReduce(s, SumOp(), scratch);
    if (ranks > 1) s = ClusterAllReduce(s, SumOp(), &slots[1], ranks);
    T* yr = y + row * n;
    // Degenerate rows take their own loop: sharing the store with the normal path made nvcc split the
    // 16-byte stores.
    if (Degenerate(m, s)) {
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
        if (col < n) StoreDegenerate<T, kVec, kMask>(yr + col, mask, moff, col, log);
      }
      continue;
    }
    const float a = log ? logf(s) : 1.f / s;
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
      if (col >= n) continue;
      float o[kVec];
#pragma unroll
      for (int k = 0; k < kVec; ++k) o[k] = log ? v[p * kVec + k] - a : v[p * kVec + k] * a;
      StorePack<T, kVec>(yr + col, o);
    }
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (ranks > 1) cg::this_cluster().sync();  // shared memory must outlive the peers' last reads
#endif
}

// ---- tier 2b: 16-bit types, a block per row, the row in registers as stored (bf16x2 / half2) ----------
// Same contract as BlockRowsKernel at 16-byte packs, but the row stays packed: 32 elements (64 bytes in
// flight) cost 16 registers instead of 32, so the cap of 40 registers keeps three 512-thread CTAs (1536
// threads, 96 KB in flight) per SM: 96-98% of the copy ceiling on an H200 at n = 2048..16384. The max is
// taken on the packed pairs (__hmax2, exact; like fmaxf it skips a NaN, which then poisons the sum).
// Softmax recomputes exp at the store as exp2((x - m) log2e - log2 s): a second ex2 per element, traded
// for the registers that would hold the exponentials (measured faster than holding them as floats).

// bfloat16 -> float is a shift. Volatile asm: as plain C++, ptxas merged the sum's and the store's
// conversions and kept all 32 floats live across the block reduction (spills under the register cap).
__device__ __forceinline__ float2 ToFloat2(__nv_bfloat162 v) {
  uint32_t w, lo, hi;
  memcpy(&w, &v, 4);
  asm volatile("shl.b32 %0, %2, 16;\n\tand.b32 %1, %2, 0xFFFF0000;" : "=r"(lo), "=r"(hi) : "r"(w));
  return make_float2(__uint_as_float(lo), __uint_as_float(hi));
}
__device__ __forceinline__ float2 ToFloat2(__half2 v) { return __half22float2(v); }
// Max of the packed row on the pairs (__hmax2: one instruction per pair, exact).
template <typename T2, int kPacks>
__device__ __forceinline__ float PackedMax(const uint4 (&raw)[kPacks], uint32_t neg_inf2) {
  T2 pm;
  memcpy(&pm, &neg_inf2, 4);
#pragma unroll
  for (int p = 0; p < kPacks; ++p) {
    const T2* h = reinterpret_cast<const T2*>(&raw[p]);
#pragma unroll
    for (int k = 0; k < 4; ++k) pm = __hmax2(pm, h[k]);
  }
  const float2 f = ToFloat2(pm);
  return fmaxf(f.x, f.y);
}

template <typename T2>
__device__ __forceinline__ T2 FromFloat2(float lo, float hi);
template <>
__device__ __forceinline__ __nv_bfloat162 FromFloat2<__nv_bfloat162>(float lo, float hi) {
  return __floats2bfloat162_rn(lo, hi);
}
template <>
__device__ __forceinline__ __half2 FromFloat2<__half2>(float lo, float hi) { return __floats2half2_rn(lo, hi); }

// Sum of exp(x - m) over the packed row (masked / padding entries are -inf: exp2(-inf) = 0).
template <typename T2, int kPacks>
__device__ __forceinline__ float PackedExpSum(const uint4 (&raw)[kPacks], float m) {
  float s = 0.f;
#pragma unroll
  for (int p = 0; p < kPacks; ++p) {
    const T2* h = reinterpret_cast<const T2*>(&raw[p]);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = ToFloat2(h[k]);
      s += Exp2((f.x - m) * kLog2e) + Exp2((f.y - m) * kLog2e);
    }
  }
  return s;
}

// One output pack: softmax exp2((x - m) log2e - a) with a = log2 s (exp recomputed: the registers hold
// only x); log_softmax (x - m) - a with a = log s.
template <typename T2>
__device__ __forceinline__ uint4 PackedOutput(const uint4& raw, float m, float a, bool log) {
  const T2* h = reinterpret_cast<const T2*>(&raw);
  uint4 out;
  uint32_t* w = &out.x;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = ToFloat2(h[k]);
    const float t0 = f.x - m, t1 = f.y - m;
    const T2 o = log ? FromFloat2<T2>(t0 - a, t1 - a)
                     : FromFloat2<T2>(Exp2(fmaf(t0, kLog2e, -a)), Exp2(fmaf(t1, kLog2e, -a)));
    memcpy(&w[k], &o, 4);
  }
  return out;
}

// How the packed kernels get the row's statistics (a template parameter; the launcher picks, see
// softmax_launch.cu's PackedStats):
//   kStatsTwoReductions  the max over the CTA, then the sum of exp(x - max) over it: two block reductions,
//                        and softmax recomputes exp at the store (PackedOutput);
//   kStatsPair           each thread's (max, sum of exp(x - its max)) pair, merged once (BlockAllReduceStats);
//                        softmax still recomputes exp at the store;
//   kStatsKeepExp        as kStatsPair, but softmax overwrites the packed x with exp(x - its max) rounded to
//                        the 16-bit type and stores e * exp(its max - m) / s: one exponential per element
//                        instead of two, for a second rounding of e (H200, bench/lab/softmax_ulp.py: at
//                        most 1.43 ulps against 0.50; jax.nn.softmax 7.4-8.0 ulps in bf16, 1.7 in f16).
//   kStatsKeepExpFma     as kStatsKeepExp, bfloat16's output scaled on the pairs (PackedScaledFma).
enum PackedStats : int { kStatsTwoReductions = 0, kStatsPair = 1, kStatsKeepExp = 2, kStatsKeepExpFma = 3 };
// The statistics that keep softmax's exponentials in the row's registers.
constexpr bool KeepsExp(int stats) { return stats == kStatsKeepExp || stats == kStatsKeepExpFma; }

// kStatsKeepExp: the pairs overwritten by exp(x - mt) (mt: this thread's max), their float32 sum returned. A
// thread whose entries are all -inf (padding, masked) shifts by 0 instead and so holds exp(-inf) = 0 and
// returns 0 (a select, not a branch: a branch that zeroed the registers made ptxas spill them).
template <typename T2, int kPacks>
__device__ __forceinline__ float PackedExpInPlace(uint4 (&raw)[kPacks], float mt) {
  if (mt == -CUDART_INF_F) mt = 0.f;
  float s = 0.f;
#pragma unroll
  for (int p = 0; p < kPacks; ++p) {
    T2* h = reinterpret_cast<T2*>(&raw[p]);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = ToFloat2(h[k]);
      const float e0 = Exp2((f.x - mt) * kLog2e), e1 = Exp2((f.y - mt) * kLog2e);
      s += e0 + e1;
      h[k] = FromFloat2<T2>(e0, e1);
    }
  }
  return s;
}

// kStatsKeepExp: one output pack, the kept exponentials times the thread's scale c = exp(mt - m) / s.
template <typename T2>
__device__ __forceinline__ uint4 PackedScaled(const uint4& raw, float c) {
  const T2* h = reinterpret_cast<const T2*>(&raw);
  uint4 out;
  uint32_t* w = &out.x;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = ToFloat2(h[k]);
    const T2 o = FromFloat2<T2>(f.x * c, f.y * c);
    memcpy(&w[k], &o, 4);
  }
  return out;
}

// The per-row scalar of a packed row's output pass: kStatsKeepExp exp(mt - m) / s (0 where mt = -inf; raw holds
// zeros there), else log s (log_softmax) or log2 s (softmax). kStatsKeepExpFma also splits it into two 16-bit
// pairs, hi + lo = a (lo holds a's bits below hi's precision), once per row (PackedScaledFma).
template <typename T2>
struct PackedScalar {
  float a;
  T2 hi, lo;
};
template <int kStats, typename T2>
__device__ __forceinline__ PackedScalar<T2> PackedOutputScalar(float m, float s, float mt, bool log) {
  PackedScalar<T2> r;
  if constexpr (KeepsExp(kStats)) r.a = Exp2((mt - m) * kLog2e - log2f(s));
  else r.a = log ? logf(s) : log2f(s);
  if constexpr (kStats == kStatsKeepExpFma) {
    r.hi = FromFloat2<T2>(r.a, r.a);
    const float rest = r.a - ToFloat2(r.hi).x;
    r.lo = FromFloat2<T2>(rest, rest);
  }
  return r;
}

// kStatsKeepExpFma: PackedScaled on the pairs, each e * c as fma(e, c.hi, e * c.lo): exact up to e * c.lo's
// rounding (2^-16 of the result) and then rounded once, as the float32 product is (at most 0.61 ulps against
// 0.50 over 10^6 random pairs, NumPy emulation). Two packed instructions per pair instead of two conversions,
// two multiplies and a pack. bfloat16 only: float16's c.lo turns subnormal once c < 2^-3 and loses the bits it
// carries (1.2 ulps in the same emulation). c <= 1, so every term is finite.
template <typename T2>
__device__ __forceinline__ uint4 PackedScaledFma(const uint4& raw, const PackedScalar<T2>& c) {
  static_assert(std::is_same_v<T2, __nv_bfloat162>, "bfloat16 only (see above)");
  const T2* h = reinterpret_cast<const T2*>(&raw);
  uint4 out;
  uint32_t* w = &out.x;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const T2 o = __hfma2(h[k], c.hi, __hmul2(h[k], c.lo));
    memcpy(&w[k], &o, 4);
  }
  return out;
}

// One output pack of a packed row, `c` from PackedOutputScalar.
template <int kStats, typename T2>
__device__ __forceinline__ uint4 PackedStore(const uint4& raw, float m, const PackedScalar<T2>& c, bool log) {
  if constexpr (kStats == kStatsKeepExpFma) return PackedScaledFma<T2>(raw, c);
  else if constexpr (kStats == kStatsKeepExp) return PackedScaled<T2>(raw, c.a);
  else return PackedOutput<T2>(raw, m, c.a, log);
}

// The statistics of a packed row (see PackedStats): m, s for the row; mt = this thread's own max, and with
// kStatsKeepExp (softmax only) raw holds exp(x - mt). sm / ss: 32 floats each of shared scratch.
template <int kStats, typename T2, int kPacks>
__device__ __forceinline__ void PackedRowStats(uint4 (&raw)[kPacks], uint32_t neg_inf2, float& m, float& s, float& mt,
                                               float* sm, float* ss) {
  m = PackedMax<T2, kPacks>(raw, neg_inf2);
  mt = m;
  if constexpr (kStats == kStatsTwoReductions) {
    m = BlockAllReduce(m, MaxOp(), sm);
    s = BlockAllReduce(PackedExpSum<T2, kPacks>(raw, m), SumOp(), sm);
  } else {
    if constexpr (KeepsExp(kStats)) s = PackedExpInPlace<T2, kPacks>(raw, mt);
    else s = mt == -CUDART_INF_F ? 0.f : PackedExpSum<T2, kPacks>(raw, mt);
    BlockAllReduceStats(m, s, sm, ss);
  }
}

// Masked entries of one packed 16-byte pack (8 16-bit elements at column `col`) set to -inf (neg_inf2: the
// -inf pair's bits).
__device__ __forceinline__ void MaskPackedPack(uint4& raw, const MaskIndex& mask, int64_t moff, int64_t col,
                                               uint32_t neg_inf2) {
  bool live[8];
  LoadLive<8>(mask, moff, col, live);
  uint32_t* w = &raw.x;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const uint32_t keep = (live[2 * k] ? 0xFFFFu : 0u) | (live[2 * k + 1] ? 0xFFFF0000u : 0u);
    w[k] = (w[k] & keep) | (neg_inf2 & ~keep);
  }
}

// kMinBlocks = 3: <= 40 registers (32 elements per thread); 2: <= 64 registers, for 64 elements per thread
// (16-bit rows of up to 32768 in one read).
// kStats: PackedStats.
template <typename T, int kPacks, bool kMask, int kMinBlocks = 3, int kStats = kStatsTwoReductions>
__global__ void __launch_bounds__(kBlockRowsMaxThreads, kMinBlocks)
    BlockRowsPackedKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n, MaskIndex mask,
                          bool log) {
  static_assert(sizeof(T) == 2, "16-bit types only");
  constexpr int kVec = 8;  // one 16-byte pack: 4 pairs
  using T2 = typename Pair<T>::type;
  constexpr uint32_t kNegInf2 = uint32_t(Pair<T>::kNegInf) * 0x10001u;
  if constexpr (KeepsExp(kStats)) log = false;  // softmax only (the launcher's contract): one path
  __shared__ float sm[32], ss[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t moff = kMask ? mask.outer.Offset(row) : 0;
    const T* xr = x + row * n;
    uint4 raw[kPacks];
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
      if (col < n) {
        raw[p] = *reinterpret_cast<const uint4*>(xr + col);
      } else {
        raw[p] = make_uint4(kNegInf2, kNegInf2, kNegInf2, kNegInf2);
      }
    }
    if constexpr (kMask) {
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const int col = (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
        if (col < n) MaskPackedPack(raw[p], mask, moff, col, kNegInf2);
      }
    }
    float m, s, mt;
    PackedRowStats<kStats, T2, kPacks>(raw, kNegInf2, m, s, mt, sm, ss);
    T* yr = y + row * n;
    if (Degenerate(m, s)) {  // own loop: see BlockRowsKernel
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const int col = (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
        if (col < n) StoreDegenerate<T, kVec, kMask>(yr + col, mask, moff, col, log);
      }
      continue;
    }
    const PackedScalar<T2> a = PackedOutputScalar<kStats, T2>(m, s, mt, log);
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
      if (col < n) StoreRaw(yr + col, PackedStore<kStats, T2>(raw[p], m, a, log));
    }
  }
}

// ---- tier 2c: 16-bit types, persistent CTAs, rows staged through shared memory by the bulk copy engine --
// Lab tier (JK_SOFTMAX_HALF_BLOCK=bulk; measured 8-25% slower than BlockRowsPackedKernel on an H200 at
// n = 2048..16384, so not routed by default): the row loads no longer wait on registers. Each CTA walks rows
// blockIdx.x + k * gridDim.x; `stages` rows are in flight per CTA as 1-D bulk copies (sm_90,
// cp.async.bulk, completing on one mbarrier per stage); a row is read from shared memory into packed
// registers, the stage is refilled with the row `stages` ahead as soon as every thread has read it (the
// max reduction's barrier), then the row is reduced and written from registers. Unmasked rows of whole
// 16-byte packs with 16-byte aligned x only (the copy's alignment rule).
constexpr int kBulkMaxStages = 4;

template <typename T, int kPacks>
__global__ void __launch_bounds__(kBlockRowsMaxThreads, 3)  // <= 40 registers
    BulkRowsKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n, bool log, int stages,
                   uint32_t stage_bytes) {
  static_assert(sizeof(T) == 2, "16-bit types only");
  constexpr int kVec = 8;
  using T2 = typename Pair<T>::type;
  constexpr uint32_t kNegInf2 = uint32_t(Pair<T>::kNegInf) * 0x10001u;
  extern __shared__ __align__(128) unsigned char stage_mem[];
  __shared__ __align__(8) uint64_t bars[kBulkMaxStages];
  __shared__ float scratch[32];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const uint32_t row_bytes = static_cast<uint32_t>(n) * uint32_t(sizeof(T));
  const int64_t step = gridDim.x;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) BarrierInit(&bars[s]);
    BarrierInitFence();
    for (int s = 0; s < stages; ++s) {
      const int64_t row = blockIdx.x + s * step;
      if (row < rows) BulkLoadRow(stage_mem + s * stage_bytes, x + row * n, row_bytes, &bars[s]);
    }
  }
  __syncthreads();
  int s = 0;
  uint32_t parity = 0;
  for (int64_t row = blockIdx.x; row < rows; row += step) {
    BarrierWait(&bars[s], parity);
    const T* xs = reinterpret_cast<const T*>(stage_mem + s * stage_bytes);
    uint4 raw[kPacks];
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
      raw[p] = col < n ? *reinterpret_cast<const uint4*>(xs + col)
                       : make_uint4(kNegInf2, kNegInf2, kNegInf2, kNegInf2);
    }
    float m = PackedMax<T2, kPacks>(raw, kNegInf2);
    m = BlockAllReduce(m, MaxOp(), scratch);  // past its barriers every thread has read stage s
    if (threadIdx.x == 0) {
      const int64_t next = row + int64_t(stages) * step;
      if (next < rows) BulkLoadRow(stage_mem + s * stage_bytes, x + next * n, row_bytes, &bars[s]);
    }
    if (++s == stages) {
      s = 0;
      parity ^= 1u;
    }
    const float sum = BlockAllReduce(PackedExpSum<T2, kPacks>(raw, m), SumOp(), scratch);
    T* yr = y + row * n;
    if (Degenerate(m, sum)) {
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const int col = (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
        if (col < n) StoreDegenerate<T, kVec, false>(yr + col, MaskIndex{}, 0, col, log);
      }
      continue;
    }
    const float a = log ? logf(sum) : log2f(sum);
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
      if (col < n) StoreRaw(yr + col, PackedOutput<T2>(raw[p], m, a, log));
    }
  }
#endif
}

// ---- tier 3: a block per row, two reads --------------------------------------------------------------
// Rows longer than a CTA holds: pass 1 keeps a per-thread online (max, sum) over 16-byte packs, the
// block merges the pairs; pass 2 re-reads the row (from L2 when the rows in flight fit there) and writes.
// The re-read is the row's last use, hence the evict-first (streaming) load.

template <typename T, int kVec>
__device__ __forceinline__ void LoadPackLastUse(const T* p, float* v) {
  if constexpr (sizeof(T) * kVec == 16) {
    const uint4 raw = __ldcs(reinterpret_cast<const uint4*>(p));
    Pack<T, kVec> pk;
    memcpy(&pk, &raw, 16);
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = ToFloat(pk.v[k]);
  } else {
    LoadPack<T, kVec>(p, v);
  }
}

// This thread's online (max, sum) over packs first, first + stride, ... of a row (kVec elements each),
// kUnroll packs loaded before any is used; masked entries read as -inf and are skipped. The two-pass
// kernel's first pass and the statistics-only kernels (softmax_stats_apply.cuh).
template <typename T, int kVec, int kUnroll, bool kMask>
__device__ __forceinline__ void AccumulateRow(const T* xr, const MaskIndex& mask, int64_t moff, int64_t n,
                                              int64_t first, int64_t stride, float& m, float& s) {
  constexpr int U = kUnroll;
  m = -CUDART_INF_F;
  s = 0.f;
  for (int64_t base = first * kVec; base < n; base += U * stride * kVec) {
    float v[U][kVec];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t col = base + u * stride * kVec;
      if (col < n) {
        LoadPack<T, kVec>(xr + col, v[u]);
        if constexpr (kMask) ApplyMask<kVec>(mask, moff, col, v[u]);
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[u][k] = -CUDART_INF_F;
      }
    }
    float pm = -CUDART_INF_F;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int k = 0; k < kVec; ++k) pm = fmaxf(pm, v[u][k]);
    float ps = 0.f;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int k = 0; k < kVec; ++k) ps += v[u][k] == -CUDART_INF_F ? 0.f : ExpShifted(v[u][k], pm);
    MergeStats(m, s, pm, ps);
  }
}

template <typename T, int kVec, bool kMask>
__global__ void __launch_bounds__(kTwoPassBlock)
    TwoPassRowsKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n, MaskIndex mask,
                      bool log) {
  constexpr int kUnroll = 4;  // packs loaded before any is used: 4 independent 16-byte loads in flight
  __shared__ float sm[32], ss[32];
  const int64_t step = int64_t(blockDim.x) * kVec;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t moff = kMask ? mask.outer.Offset(row) : 0;
    const T* xr = x + row * n;
    float m, s;
    AccumulateRow<T, kVec, kUnroll, kMask>(xr, mask, moff, n, threadIdx.x, blockDim.x, m, s);
    BlockAllReduceStats(m, s, sm, ss);
    T* yr = y + row * n;
    if (Degenerate(m, s)) {  // own loop: see BlockRowsKernel
      for (int64_t col = int64_t(threadIdx.x) * kVec; col < n; col += step)
        StoreDegenerate<T, kVec, kMask>(yr + col, mask, moff, col, log);
      continue;
    }
    const float a = log ? logf(s) : 1.f / s;
    for (int64_t base = int64_t(threadIdx.x) * kVec; base < n; base += kUnroll * step) {
      float v[kUnroll][kVec];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t col = base + u * step;
        if (col < n) LoadPackLastUse<T, kVec>(xr + col, v[u]);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t col = base + u * step;
        if (col >= n) continue;
        if constexpr (kMask) ApplyMask<kVec>(mask, moff, col, v[u]);
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const float t = v[u][k] - m;
          v[u][k] = log ? t - a : Exp2(t * kLog2e) * a;
        }
        StorePack<T, kVec>(yr + col, v[u]);
      }
    }
  }
}

// ---- tier 4: columns (any axis, any row length; also the statistics-only and apply entries) --------
// blockDim = (bx, by), bx * by = kColumnsBlock: bx consecutive positions of the inner (contiguous) dims,
// by threads splitting the axis. Pass 1 runs the online max/sum; the by partials merge in shared memory
// (tree); pass 2 re-reads x (mostly from L2) and writes. Coalesced for inner >= 32 and for inner == 1
// (bx = 1: the axis itself is contiguous); a strided kernel, not transposes around a last-axis kernel.
enum class ColumnsMode { kSoftmax, kStats, kApply };

template <typename T, bool kMask, ColumnsMode kMode>
__global__ void __launch_bounds__(kColumnsBlock)
    ColumnsKernel(const T* __restrict__ x, T* __restrict__ y, float* __restrict__ max_out,
                  float* __restrict__ sum_out, const float* __restrict__ max_in, const float* __restrict__ sum_in,
                  int64_t outer, int64_t n, int64_t inner, MaskIndex mask, bool log) {
  __shared__ float sm[kColumnsBlock], ss[kColumnsBlock];
  const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  const int64_t tiles_per_outer = (inner + bx - 1) / bx;
  const int64_t tiles = outer * tiles_per_outer;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t o = tile / tiles_per_outer;
    const int64_t i = (tile - o * tiles_per_outer) * bx + tx;
    const bool valid = i < inner;
    const T* xc = x + o * n * inner + i;  // element j at xc[j * inner]
    const int64_t moff = (kMask && valid) ? mask.outer.Offset(o) + mask.inner.Offset(i) : 0;
    float m = -CUDART_INF_F, s = 0.f;
    if constexpr (kMode == ColumnsMode::kApply) {
      if (valid) {
        m = max_in[o * inner + i];
        s = sum_in[o * inner + i];
      }
    } else {
      if (valid) {
        for (int64_t j = ty; j < n; j += by) {
          float v = ToFloat(xc[j * inner]);
          if constexpr (kMask) v = mask.data[moff + j * mask.axis_stride] ? v : -CUDART_INF_F;
          OnlineAdd(m, s, v);
        }
      }
      sm[ty * bx + tx] = m;
      ss[ty * bx + tx] = s;
      __syncthreads();
      for (int half = by / 2; half > 0; half /= 2) {
        if (ty < half) {
          float a = sm[ty * bx + tx], b = ss[ty * bx + tx];
          MergeStats(a, b, sm[(ty + half) * bx + tx], ss[(ty + half) * bx + tx]);
          sm[ty * bx + tx] = a;
          ss[ty * bx + tx] = b;
        }
        __syncthreads();
      }
      m = sm[tx];
      s = ss[tx];
      __syncthreads();  // sm/ss are rewritten by the next tile
      if constexpr (kMode == ColumnsMode::kStats) {
        if (ty == 0 && valid) {
          max_out[o * inner + i] = m;
          sum_out[o * inner + i] = s;
        }
        continue;
      }
    }
    if constexpr (kMode != ColumnsMode::kStats) {
      if (!valid) continue;
      T* yc = y + o * n * inner + i;
      const bool degenerate = Degenerate(m, s);
      const float a = log ? logf(s) : 1.f / s;
      for (int64_t j = ty; j < n; j += by) {
        const bool live = !kMask || mask.data[moff + j * mask.axis_stride] != 0;
        float out;
        if (!live) {
          out = MaskedValue(log);
        } else if (degenerate) {
          out = CUDART_NAN_F;
        } else {
          const float t = ToFloat(xc[j * inner]) - m;
          out = log ? t - a : Exp2(t * kLog2e) * a;
        }
        yc[j * inner] = FromFloat<T>(out);
      }
    }
  }
}

}  // namespace jk::softmax
