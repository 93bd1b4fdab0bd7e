// Softmax / log-softmax tiers 2, 2b and 2c: a CTA (or a cluster) per row with the row in registers, its 16-bit
// form holding the row as stored, and persistent CTAs staging rows through shared memory by the bulk copy engine.
// Numerics: softmax_common.cuh.
#pragma once
#include "softmax/softmax_common.cuh"

namespace jk::softmax {

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

}  // namespace jk::softmax
