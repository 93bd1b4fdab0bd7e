// Softmax tier kClusterRowsRegisters: rows too long for one CTA's registers (16-byte packs, 16384 < n <=
// 8 x 16384 float32 elements) held in the registers of a thread-block cluster, read from DRAM once.
//
// Why not BlockRowsKernel with clusters (its JK_SOFTMAX_MAX_CLUSTER path): that kernel reduces the max and
// then the sum, two cluster barriers per row, and launches one cluster per row, so every row pays the
// cluster scheduler and two full-cluster round trips while its SMs hold no other bytes in flight (measured
// 2.0-2.3 TB/s on an H200). Here:
//   - each thread reduces its own elements to a (max, sum of exp(x - max)) pair, the CTA merges the pairs
//     (BlockAllReduceStats) and the cluster merges the CTAs' pairs after ONE barrier per row;
//   - the grid is persistent (a few clusters per SM pair, looping over rows), so two CTAs of different
//     clusters share an SM and one streams while the other waits at its barrier;
//   - the CTAs' pairs live in a slot pair indexed by row parity: a slot is rewritten two rows later, after
//     a barrier that every peer reaches only once it has read it, so one barrier per row suffices.
// Numerics as softmax_kernels.cuh: the merged max and sum are exactly the block tier's up to the order of
// the float additions (every CTA merges the ranks in rank order: bit-identical statistics on all of them).
//
// With `exchange` the CTAs trade their pairs through ClusterExchange (common/cluster_exchange.cuh: pushed into
// the peers' shared memory, one mbarrier wait, no cluster barrier per row) instead of slots read after a
// cluster barrier.
#pragma once
#include "common/cluster_exchange.cuh"
#include "softmax/softmax_kernels.cuh"

namespace jk::softmax {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// The row's (max, sum) from every thread's pair: the CTA's merge, then the cluster's, after one barrier.
// `slot` is this CTA's slot for the row's parity (see the header: a slot is rewritten two rows later).
__device__ __forceinline__ void ClusterRowStats(float& m, float& s, float* sm, float* ss, float2* slot) {
  BlockAllReduceStats(m, s, sm, ss);
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) *slot = make_float2(m, s);
  cluster.sync();  // every rank's pair for this row is written and visible
  const float2 r0 = *cluster.map_shared_rank(slot, 0);
  m = r0.x, s = r0.y;
  for (unsigned k = 1; k < cluster.num_blocks(); ++k) {
    const float2 r = *cluster.map_shared_rank(slot, k);
    MergeStats(m, s, r.x, r.y);
  }
}

// The same through the exchange: this CTA's pair pushed to its peers, theirs merged in rank order.
__device__ __forceinline__ void ExchangeRowStats(float& m, float& s, float* sm, float* ss, ClusterExchange<float2>& ex,
                                                 int parity, uint32_t use) {
  BlockAllReduceStats(m, s, sm, ss);
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), ranks = cluster.num_blocks();
  if (threadIdx.x == 0) ex.Publish(parity, make_float2(m, s), rank, ranks);
  ex.Wait(parity, use);
  const float2 r0 = ex.slot[parity][0];
  m = r0.x, s = r0.y;
  for (unsigned k = 1; k < ranks; ++k) {
    const float2 r = ex.slot[parity][k];
    MergeStats(m, s, r.x, r.y);
  }
}

// Either exchange of the row's statistics (see the header).
struct RowStatsExchange {
  float2* slots;  // the barrier path's [2]
  ClusterExchange<float2>* ex;
  bool on;
  __device__ __forceinline__ void operator()(float& m, float& s, float* sm, float* ss, int parity, uint32_t use) const {
    if (on) ExchangeRowStats(m, s, sm, ss, *ex, parity, use);
    else ClusterRowStats(m, s, sm, ss, &slots[parity]);
  }
};
#endif

// kKeepExp: softmax keeps exp(x - the thread's max) in v and scales it at the store (one exponential per
// element; float32, so no extra rounding) instead of recomputing exp there.
template <typename T, int kVec, int kPacks, bool kMask, bool kKeepExp = false>
__global__ void __launch_bounds__(kBlockRowsMaxThreads, 2)  // <= 64 registers: two CTAs of 512 per SM
    ClusterRowsKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n, MaskIndex mask,
                      bool log, int exchange) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kElems = kPacks * kVec;
  if constexpr (kKeepExp) log = false;  // softmax only (the launcher's contract): one path
  __shared__ float sm[32], ss[32];
  __shared__ float2 slots[2];  // this CTA's (max, sum) for rows of parity 0 / 1, read by the peers
  __shared__ ClusterExchange<float2> ex;
  if (exchange) ex.Init();
  const RowStatsExchange row_stats{slots, &ex, exchange != 0};
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), ranks = cluster.num_blocks();
  const int col0 = int(rank * blockDim.x) * kElems;  // n < 2^31 in this tier: 32-bit column math
  uint32_t it = 0;  // this CTA's rows so far: slot set it % 2, its (it / 2)-th use
  for (int64_t row = blockIdx.x / ranks; row < rows; row += gridDim.x / ranks, ++it) {
    const int parity = static_cast<int>(it & 1u);
    const uint32_t use = it >> 1;
    const int64_t moff = kMask ? mask.outer.Offset(row) : 0;
    const T* xr = x + row * n;
    float v[kElems];
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
    }
    // This thread's pair: its max, then the sum of exp(x - max) over its elements (0 when all are -inf).
    float m = -CUDART_INF_F;
#pragma unroll
    for (int e = 0; e < kElems; ++e) m = fmaxf(m, v[e]);
    float s = 0.f;
    const float mt = m;
    if constexpr (kKeepExp) {  // all -inf: shifted by 0, exp(-inf) = 0 (see PackedExpInPlace)
      const float shift = mt == -CUDART_INF_F ? 0.f : mt;
#pragma unroll
      for (int e = 0; e < kElems; ++e) {
        v[e] = ExpShifted(v[e], shift);
        s += v[e];
      }
    } else if (m != -CUDART_INF_F) {
#pragma unroll
      for (int e = 0; e < kElems; ++e) s += ExpShifted(v[e], m);
    }
    row_stats(m, s, sm, ss, parity, use);
    T* yr = y + row * n;
    if (Degenerate(m, s)) {  // own loop: see BlockRowsKernel
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
        if (col < n) StoreDegenerate<T, kVec, kMask>(yr + col, mask, moff, col, log);
      }
      continue;
    }
    // kKeepExp: v holds exp(x - mt), times a = exp(mt - m) / s (0 where mt = -inf). Otherwise softmax:
    // exp2((x - m) log2e - a), a = log2 s, the exponential recomputed (v holds x); log: (x - m) - a, a = log s.
    float a;
    if constexpr (kKeepExp) a = Exp2((mt - m) * kLog2e - Log2Approx(s));
    else a = log ? logf(s) : Log2Approx(s);
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
      if (col >= n) continue;
      float o[kVec];
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const float vk = v[p * kVec + k];
        if constexpr (kKeepExp) o[k] = vk * a;
        else o[k] = log ? (vk - m) - a : Exp2((vk - m) * kLog2e - a);
      }
      StorePack<T, kVec>(yr + col, o);
    }
  }
  cluster.sync();  // shared memory must outlive the peers' last reads
#endif
}

// 16-bit rows as BlockRowsPackedKernel holds them (kPacks 16-byte packs per thread, packed in registers;
// kPacks = 8: 64 elements, <= 64 registers, two CTAs of 512 per SM), spread over the cluster: 16-bit rows of
// up to 8 x 32768 elements in one read. kStats: kStatsPair (exp recomputed at the store), kStatsKeepExp or, for
// bfloat16, kStatsKeepExpFma (softmax's exponentials kept: softmax's default, keepfma for bfloat16, see
// softmax_launch.cu's StatsChoice). (32 packed
// elements at three CTAs per SM, clusters twice as wide, measured 62-72% of copy against 87-90%:
// bench/lab/s11_h200.md.)
// kLog: log_softmax, a template parameter (the `log` argument is ignored): with `log` a run-time select, ptxas
// predicated both outputs' instructions into one store loop for bfloat16, so log_softmax also issued softmax's
// exponentials (H200, Nsight Compute at 24576 x 65536: XU pipe 52% against 29% for float16, 17% more
// instructions), and a loop per output spilled.
template <typename T, int kPacks, bool kMask, int kStats = kStatsPair, bool kLog = false>
__global__ void __launch_bounds__(kBlockRowsMaxThreads, 2)
    ClusterRowsPackedKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n, MaskIndex mask,
                            bool log, int exchange) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(sizeof(T) == 2, "16-bit types only");
  static_assert(!(kLog && KeepsExp(kStats)), "kept exponentials: softmax only");
  constexpr int kVec = 8;
  using T2 = typename Pair<T>::type;
  constexpr uint32_t kNegInf2 = uint32_t(Pair<T>::kNegInf) * 0x10001u;
  log = kLog;
  __shared__ float sm[32], ss[32];
  __shared__ float2 slots[2];
  __shared__ ClusterExchange<float2> ex;
  if (exchange) ex.Init();
  const RowStatsExchange row_stats{slots, &ex, exchange != 0};
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), ranks = cluster.num_blocks();
  const int col0 = int(rank * blockDim.x) * kPacks * kVec;
  uint32_t it = 0;  // this CTA's rows so far: slot set it % 2, its (it / 2)-th use
  for (int64_t row = blockIdx.x / ranks; row < rows; row += gridDim.x / ranks, ++it) {
    const int parity = static_cast<int>(it & 1u);
    const uint32_t use = it >> 1;
    const int64_t moff = kMask ? mask.outer.Offset(row) : 0;
    const T* xr = x + row * n;
    uint4 raw[kPacks];
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
      raw[p] = col < n ? *reinterpret_cast<const uint4*>(xr + col)
                       : make_uint4(kNegInf2, kNegInf2, kNegInf2, kNegInf2);
    }
    if constexpr (kMask) {
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
        if (col < n) MaskPackedPack(raw[p], mask, moff, col, kNegInf2);
      }
    }
    static_assert(kStats != kStatsTwoReductions, "one exchange per row: pairs");
    float m = PackedMax<T2, kPacks>(raw, kNegInf2), s;
    const float mt = m;
    if constexpr (KeepsExp(kStats)) s = PackedExpInPlace<T2, kPacks>(raw, mt);
    else s = m == -CUDART_INF_F ? 0.f : PackedExpSum<T2, kPacks>(raw, m);
    row_stats(m, s, sm, ss, parity, use);
    T* yr = y + row * n;
    if (Degenerate(m, s)) {  // own loop: see BlockRowsKernel
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
        if (col < n) StoreDegenerate<T, kVec, kMask>(yr + col, mask, moff, col, log);
      }
      continue;
    }
    const PackedScalar<T2> a = PackedOutputScalar<kStats, T2>(m, s, mt, log);
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
      if (col < n) StoreRaw(yr + col, PackedStore<kStats, T2>(raw[p], m, a, log));
    }
  }
  cluster.sync();  // shared memory must outlive the peers' last reads
#endif
}

// kClusterRowsHybrid: rows held partly in registers, partly in shared memory. Each thread keeps kPacks 16-byte
// packs in registers (as ClusterRowsKernel) and kStaged more in dynamic shared memory, copied there by its own
// cp.async (no register staging, no CTA barrier: a thread reads back only the slots it filled). A CTA of 512
// threads then holds twice the row of ClusterRowsKernel with two CTAs per SM, so the cluster is half as wide
// (float32 65536: 2 CTAs instead of 4) or gone (float32 32768: one CTA, no exchange). The staged packs are stored
// first and the next row's copies into their slots are issued before the register packs' stores, so that part
// of the next row is in flight while this row drains. The staged loops are not unrolled: unrolled, ptxas hoisted
// their shared-memory loads next to the register packs and spilled. Unmasked rows only; the launcher's
// configuration: float32, 6 + 10 packs (softmax_launch.cu LaunchHybridRows).
template <typename T, int kVec, int kPacks, int kStaged>
__global__ void __launch_bounds__(kBlockRowsMaxThreads, 2)  // <= 64 registers: two CTAs of 512 per SM
    ClusterRowsHybridKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n, MaskIndex mask,
                            bool log) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kElems = kPacks * kVec;
  static_assert(sizeof(T) * kVec == 16, "16-byte packs");
  extern __shared__ uint4 staged[];  // [kStaged][blockDim.x]: each thread's own packs
  __shared__ float sm[32], ss[32];
  __shared__ ClusterExchange<float2> ex;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), ranks = cluster.num_blocks();
  if (ranks > 1) ex.Init();
  const int threads = int(blockDim.x), tid = int(threadIdx.x);
  const int col0 = int(rank) * threads * (kPacks + kStaged) * kVec;  // n < 2^31 in this tier
  // Pack p of this thread: registers for p < kPacks, staged slot p - kPacks after.
  const auto col_of = [&](int p) { return col0 + (p * threads + tid) * kVec; };
  const auto slot = [&](int q) { return reinterpret_cast<const T*>(&staged[q * threads + tid]); };
  const auto stage = [&](int64_t row) {
    const T* xr = x + row * n;
#pragma unroll 1
    for (int q = 0; q < kStaged; ++q) {
      const int col = col_of(kPacks + q);
      if (col < n) CopyAsync16(&staged[q * threads + tid], xr + col);
    }
    CopyAsyncCommit();
  };
  const int64_t step = gridDim.x / ranks;
  int64_t row = blockIdx.x / ranks;
  if (row < rows) stage(row);
  uint32_t it = 0;  // this CTA's rows so far: exchange parity it % 2, its (it / 2)-th use
  for (; row < rows; row += step, ++it) {
    const T* xr = x + row * n;
    float v[kElems];
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = col_of(p);
      if (col < n) {
        LoadPack<T, kVec>(xr + col, &v[p * kVec]);
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[p * kVec + k] = -CUDART_INF_F;
      }
    }
    float m = -CUDART_INF_F;
#pragma unroll
    for (int e = 0; e < kElems; ++e) m = fmaxf(m, v[e]);
    CopyAsyncWaitAll();
#pragma unroll 1
    for (int q = 0; q < kStaged; ++q) {
      if (col_of(kPacks + q) >= n) continue;
      float f[kVec];
      LoadPack<T, kVec>(slot(q), f);
#pragma unroll
      for (int k = 0; k < kVec; ++k) m = fmaxf(m, f[k]);
    }
    float s = 0.f;
    if (m != -CUDART_INF_F) {
#pragma unroll
      for (int e = 0; e < kElems; ++e) s += ExpShifted(v[e], m);
#pragma unroll 1
      for (int q = 0; q < kStaged; ++q) {
        if (col_of(kPacks + q) >= n) continue;
        float f[kVec];
        LoadPack<T, kVec>(slot(q), f);
#pragma unroll
        for (int k = 0; k < kVec; ++k) s += ExpShifted(f[k], m);
      }
    }
    if (ranks > 1) ExchangeRowStats(m, s, sm, ss, ex, int(it & 1u), it >> 1);
    else BlockAllReduceStats(m, s, sm, ss);
    T* yr = y + row * n;
    const int64_t next = row + step;
    if (Degenerate(m, s)) {  // own loop: see BlockRowsKernel
#pragma unroll
      for (int p = 0; p < kPacks + kStaged; ++p) {
        const int col = col_of(p);
        if (col < n) StoreDegenerate<T, kVec, false>(yr + col, mask, 0, col, log);
      }
      if (next < rows) stage(next);
      continue;
    }
    // softmax: exp2((x - m) log2e - a), a = log2 s; log: (x - m) - a, a = log s.
    const float a = log ? logf(s) : Log2Approx(s);
    const auto out = [&](const float* in, T* dst) {
      float o[kVec];
#pragma unroll
      for (int k = 0; k < kVec; ++k) o[k] = log ? (in[k] - m) - a : Exp2((in[k] - m) * kLog2e - a);
      StorePack<T, kVec>(dst, o);
    };
#pragma unroll 1
    for (int q = 0; q < kStaged; ++q) {
      const int col = col_of(kPacks + q);
      if (col >= n) continue;
      float f[kVec];
      LoadPack<T, kVec>(slot(q), f);
      out(f, yr + col);
    }
    if (next < rows) stage(next);  // the slots' reads above are done: their values were stored
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = col_of(p);
      if (col < n) out(&v[p * kVec], yr + col);
    }
  }
  if (ranks > 1) cluster.sync();  // shared memory must outlive the peers' last reads
#endif
}

}  // namespace jk::softmax
