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
// `prefetch` rows ahead (0: none) thread 0 asks L2 for this CTA's slice of a later row of its loop
// (PrefetchL2), right after issuing this row's loads: DRAM keeps streaming while the CTA reduces, waits at
// the barrier and stores (common/row_prefetch.h).
#pragma once
#include "common/bulk_copy.cuh"
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

// Thread 0's L2 prefetch of this CTA's slice [col0, col0 + slice) of the row `ahead` loop steps after `row`.
template <typename T>
__device__ __forceinline__ void PrefetchSlice(const T* x, int64_t row, int64_t step, int ahead, int64_t rows,
                                              int64_t n, int col0, int slice) {
  const int64_t next = row + step * ahead;
  if (ahead == 0 || threadIdx.x != 0 || next >= rows || col0 >= n) return;
  const int64_t elems = n - col0 < slice ? n - col0 : slice;  // whole 16-byte packs: n is
  PrefetchL2(x + next * n + col0, static_cast<uint32_t>(elems * int64_t(sizeof(T))));
}
#endif

template <typename T, int kVec, int kPacks, bool kMask>
__global__ void __launch_bounds__(kBlockRowsMaxThreads, 2)  // <= 64 registers: two CTAs of 512 per SM
    ClusterRowsKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n, MaskIndex mask,
                      bool log, int prefetch) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kElems = kPacks * kVec;
  __shared__ float sm[32], ss[32];
  __shared__ float2 slots[2];  // this CTA's (max, sum) for rows of parity 0 / 1, read by the peers
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), ranks = cluster.num_blocks();
  const int col0 = int(rank * blockDim.x) * kElems;  // n < 2^31 in this tier: 32-bit column math
  int parity = 0;
  for (int64_t row = blockIdx.x / ranks; row < rows; row += gridDim.x / ranks, parity ^= 1) {
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
    PrefetchSlice(x, row, gridDim.x / ranks, prefetch, rows, n, col0, int(blockDim.x) * kElems);
    // This thread's pair: its max, then the sum of exp(x - max) over its elements (0 when all are -inf).
    float m = -CUDART_INF_F;
#pragma unroll
    for (int e = 0; e < kElems; ++e) m = fmaxf(m, v[e]);
    float s = 0.f;
    if (m != -CUDART_INF_F) {
#pragma unroll
      for (int e = 0; e < kElems; ++e) s += ExpShifted(v[e], m);
    }
    ClusterRowStats(m, s, sm, ss, &slots[parity]);
    T* yr = y + row * n;
    if (Degenerate(m, s)) {  // own loop: see BlockRowsKernel
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
        if (col < n) StoreDegenerate<T, kVec, kMask>(yr + col, mask, moff, col, log);
      }
      continue;
    }
    // softmax: exp2((x - m) log2e - log2 s), the exponential recomputed (v holds x); log: (x - m) - log s.
    const float a = log ? logf(s) : Log2Approx(s);
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
      if (col >= n) continue;
      float o[kVec];
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const float t = v[p * kVec + k] - m;
        o[k] = log ? t - a : Exp2(t * kLog2e - a);
      }
      StorePack<T, kVec>(yr + col, o);
    }
  }
  cluster.sync();  // shared memory must outlive the peers' last reads
#endif
}

// 16-bit rows as BlockRowsPackedKernel holds them (kPacks 16-byte packs per thread, packed in registers;
// kPacks = 8: 64 elements, <= 64 registers, two CTAs of 512 per SM), spread over the cluster: 16-bit rows of
// up to 8 x 32768 elements in one read.
template <typename T, int kPacks, bool kMask>
__global__ void __launch_bounds__(kBlockRowsMaxThreads, 2)
    ClusterRowsPackedKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n, MaskIndex mask,
                            bool log, int prefetch) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(sizeof(T) == 2, "16-bit types only");
  constexpr int kVec = 8;
  using T2 = typename Pair<T>::type;
  constexpr uint32_t kNegInf2 = uint32_t(Pair<T>::kNegInf) * 0x10001u;
  __shared__ float sm[32], ss[32];
  __shared__ float2 slots[2];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), ranks = cluster.num_blocks();
  const int col0 = int(rank * blockDim.x) * kPacks * kVec;
  int parity = 0;
  for (int64_t row = blockIdx.x / ranks; row < rows; row += gridDim.x / ranks, parity ^= 1) {
    const int64_t moff = kMask ? mask.outer.Offset(row) : 0;
    const T* xr = x + row * n;
    uint4 raw[kPacks];
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
      raw[p] = col < n ? *reinterpret_cast<const uint4*>(xr + col)
                       : make_uint4(kNegInf2, kNegInf2, kNegInf2, kNegInf2);
    }
    PrefetchSlice(x, row, gridDim.x / ranks, prefetch, rows, n, col0, int(blockDim.x) * kPacks * kVec);
    if constexpr (kMask) {
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
        if (col < n) MaskPackedPack(raw[p], mask, moff, col, kNegInf2);
      }
    }
    float m = PackedMax<T2, kPacks>(raw, kNegInf2);
    float s = m == -CUDART_INF_F ? 0.f : PackedExpSum<T2, kPacks>(raw, m);
    ClusterRowStats(m, s, sm, ss, &slots[parity]);
    T* yr = y + row * n;
    if (Degenerate(m, s)) {  // own loop: see BlockRowsKernel
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
        if (col < n) StoreDegenerate<T, kVec, kMask>(yr + col, mask, moff, col, log);
      }
      continue;
    }
    const float a = log ? logf(s) : log2f(s);
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = col0 + (p * int(blockDim.x) + int(threadIdx.x)) * kVec;
      if (col < n) StoreRaw(yr + col, PackedOutput<T2>(raw[p], m, a, log));
    }
  }
  cluster.sync();  // shared memory must outlive the peers' last reads
#endif
}

}  // namespace jk::softmax
