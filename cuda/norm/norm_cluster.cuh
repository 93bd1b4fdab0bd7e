// LayerNorm / RMSNorm tier kClusterRowsRegisters: rows too long for one CTA's registers held in the registers
// of a thread-block cluster and read from DRAM once. Device code only; the launcher is norm_cluster.cu.
//
// The softmax tier of the same name (softmax/softmax_cluster.cuh) showed the shape that works on an H200:
// one cluster barrier per row, a persistent grid of as many clusters as fit, two CTAs of 512 threads per SM
// so one streams while the other waits at its barrier. The norms' earlier cluster attempt
// (BlockPerRowRegisters with `cluster` > 1) paid a cluster round trip per reduction and one cluster launch
// per row, and lost to the two-read tier.
//
// Statistics: each thread reduces its elements of the row (shifted by the row's first element for LayerNorm,
// RowShift in norm_kernels.cuh) to an exact two-pass Welford state (count, mean, M2) in registers; the CTA
// merges the states (BlockAllReduceWelford), then every CTA merges the cluster's states in rank order after
// one barrier (bit-identical statistics on every rank). RMSNorm uses the same states: mean(x^2) = var +
// mean^2, two non-negative terms (as BlockPerRowTwoReads). The slots are indexed by row parity: a slot is
// rewritten two rows later, after a barrier every peer reaches only once it has read it.
//
// Two layouts of the thread's part of the row, as the block tiers:
//   float32  kPacks 16-byte packs held as floats (kPacks = 8: 32 elements, <= 64 registers);
//   16-bit   kPacks 16-byte packs held as raw words (kPacks = 8: 64 elements, <= 64 registers), converted
//            on the fly in each pass (UnpackPinned / UnpackAgain, norm_packed_block.cuh).
// Pack k of rank r's thread t covers columns ((r * kPacks + k) * blockDim.x + t) * 8 / sizeof(T)...: each
// rank owns a contiguous slice of the row, each pass coalesced.
#pragma once
#include <cooperative_groups.h>

#include "norm/norm_packed_block.cuh"

namespace jk::norm {

namespace cg = cooperative_groups;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// The row's Welford state from every thread's: the CTA's merge, then the cluster's after one barrier.
// `between` runs after the CTA's merge (every thread's reads of the row are done) and before the cluster
// barrier: where a staged CTA refills its prefetch buffer.
template <typename Between>
__device__ __forceinline__ Welford ClusterRowWelford(Welford w, float* scratch, float4* slot, Between between) {
  w = BlockAllReduceWelford(w, scratch);
  between();
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) *slot = make_float4(w.count, w.mean, w.m2, 0.f);
  cluster.sync();  // every rank's state for this row is written and visible
  Welford r;
  for (unsigned k = 0; k < cluster.num_blocks(); ++k) {
    const float4 s = *cluster.map_shared_rank(slot, k);
    Welford o;
    o.count = s.x, o.mean = s.y, o.m2 = s.z;
    if (k == 0) r = o;
    else r.Merge(o);
  }
  return r;
}
#endif

// This thread's Welford state of `count` values: Begin with their sum (the mean), then Add each value (the
// squared deviations from that mean): two exact passes over registers.
struct ThreadWelford {
  Welford w;
  __device__ __forceinline__ void Begin(float count, float sum) {
    w.count = count;
    w.mean = count > 0.f ? sum / count : 0.f;
  }
  __device__ __forceinline__ void Add(float v) {
    const float d = v - w.mean;
    w.m2 = fmaf(d, d, w.m2);
  }
};

// LayerNorm's shift source: the row's first element (RowShift), as stored; RMSNorm: 0.
template <Kind K, typename T>
__device__ __forceinline__ T RowHead(const T* x, int64_t row, int64_t rows, int64_t n) {
  return K == Kind::kLayerNorm && row < rows ? x[row * n] : FromFloat<T>(0.f);
}

// kStage: the CTA's slice of its next row is prefetched into dynamic shared memory (RowPrefetch,
// common/bulk_copy.cuh), and, where every row uses the same scale and bias (one group), the CTA's slices of
// those are copied there once: a persistent CTA always owns the same columns, so the parameters are read
// from L2 once per kernel instead of once per row (on the two-read tier each parameter row cost 10-15% of
// the copy ceiling at 32768 float32 columns: bench/lab/s6_probe_h200.md). Dynamic shared memory: the slice
// of x, then those of scale and bias (each blockDim.x * kPacks * 16 bytes). The next row's first element
// (LayerNorm's shift) is loaded a row ahead too, so no CTA waits on a lone DRAM load at a row's start.
template <typename T, Kind K, int kPacks, bool kStage>
__global__ void __launch_bounds__(512, 2)  // <= 64 registers: two CTAs of 512 per SM
    ClusterRowsNorm(Params<T> p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kP = 16 / sizeof(T);  // elements per pack
  extern __shared__ __align__(128) unsigned char stage_mem[];
  __shared__ __align__(8) uint64_t bars[3];
  __shared__ float scratch[3 * 32];
  __shared__ float4 slots[2];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), ranks = cluster.num_blocks();
  const int64_t rows = p.outer, n = p.n;
  const int ncols = static_cast<int>(n);  // < 2^31 in this tier (the launcher checks)
  const int t = static_cast<int>(threadIdx.x), lanes = static_cast<int>(blockDim.x);
  const int chunk = lanes * kPacks * kP;  // this CTA's slice: columns [col0, col0 + chunk) of every row
  const int col0 = static_cast<int>(rank) * chunk;
  auto col_of = [&](int k) { return col0 + (k * lanes + t) * kP; };
  const int64_t step = gridDim.x / ranks;
  // Staged parameters: slice-relative pointers (index col - col0); otherwise each row's, indexed by col.
  T* const sx = reinterpret_cast<T*>(stage_mem);
  T* const sg = sx + chunk;
  T* const sb = sg + chunk;
  const bool one_group = (p.scale == nullptr || p.scale_rows_per_group >= rows) &&
                         (K == Kind::kRmsNorm || p.bias == nullptr || p.bias_rows_per_group >= rows);
  const bool params_staged = kStage && one_group;
  const uint32_t slice = StageBytes<T>(n, col0, chunk);
  RowPrefetch pf{sx, &bars[0], kStage ? slice : 0u};
  RowPrefetch pg{sg, &bars[1], params_staged && p.scale != nullptr ? slice : 0u};
  RowPrefetch pb{sb, &bars[2], params_staged && K == Kind::kLayerNorm && p.bias != nullptr ? slice : 0u};
  const int64_t first = blockIdx.x / ranks;
  T head = kStage ? RowHead<K>(p.x, first, rows, n) : FromFloat<T>(0.f);
  if constexpr (kStage) {
    pf.Start(p.x + first * n + col0);
    pg.Start(p.scale != nullptr ? p.scale + col0 : nullptr);
    pb.Start(p.bias != nullptr ? p.bias + col0 : nullptr);
    __syncthreads();  // the barriers' init, before anyone waits
    pg.Wait();
    pb.Wait();
  }
  const int poff = params_staged ? col0 : 0;  // parameter index = col - poff
  int parity = 0;
  for (int64_t row = first; row < rows; row += step, parity ^= 1) {
    // Column col of the row: at xs[col - xoff] (staged: the CTA's slice in shared memory, from col0 on).
    const T* xs = kStage ? sx : p.x + row * n;
    const int xoff = kStage ? col0 : 0;
    if constexpr (kStage) pf.Wait();
    else head = RowHead<K>(p.x, row, rows, n);
    const float shift = ToFloat(head);
    ThreadWelford tw;
    float mean = 0.f, rstd;
    auto refill = [&] {
      if (kStage && row + step < rows) pf.Refill(p.x + (row + step) * n + col0);
    };
    if constexpr (sizeof(T) == 4) {
      Pack<T, kP> v[kPacks];  // x as loaded; the passes subtract the shift
      int live = 0;
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        const int col = col_of(k);
        if (col < ncols) {
          v[k] = LoadPack<T, kP>(xs + (col - xoff));
          ++live;
        }
      }
      if constexpr (kStage) head = RowHead<K>(p.x, row + step, rows, n);  // in flight through the barrier
      float s = 0.f;
#pragma unroll
      for (int k = 0; k < kPacks; ++k)
        if (col_of(k) < ncols)
#pragma unroll
          for (int e = 0; e < kP; ++e) s += v[k].v[e] - shift;
      tw.Begin(static_cast<float>(live * kP), s);
#pragma unroll
      for (int k = 0; k < kPacks; ++k)
        if (col_of(k) < ncols)
#pragma unroll
          for (int e = 0; e < kP; ++e) tw.Add(v[k].v[e] - shift);
      const Welford w = ClusterRowWelford(tw.w, scratch, &slots[parity], refill);
      const float var = w.m2 / static_cast<float>(n);
      mean = K == Kind::kLayerNorm ? shift + w.mean : 0.f;
      rstd = RstdFrom(K == Kind::kLayerNorm ? var : var + w.mean * w.mean, p.epsilon);
      asm volatile("" ::: "memory");  // parameter loads after the reductions (see BlockPerRowPacked)
      const T* scale = params_staged ? (p.scale != nullptr ? sg : nullptr) : ScaleRow(p, row);
      const T* bias = params_staged ? (p.bias != nullptr ? sb : nullptr) : BiasRow(p, row);
      T* yr = p.y + row * n;
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        const int col = col_of(k);
        if (col < ncols)
          StorePack<T, kP>(yr + col, NormalizePack<K, T, kP>(v[k], mean, rstd, scale, bias, col - poff));
      }
    } else {
      uint32_t pad = 0;
      if constexpr (K == Kind::kLayerNorm) {
        uint16_t bits;
        memcpy(&bits, &head, sizeof(bits));
        pad = uint32_t{bits} * 0x10001u;
      }
      uint4 raw[kPacks];
      int live = 0;
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        const int col = col_of(k);
        raw[k] = col < ncols ? LoadWords(xs + (col - xoff)) : make_uint4(pad, pad, pad, pad);
        live += col < ncols;
      }
      if constexpr (kStage) head = RowHead<K>(p.x, row + step, rows, n);  // in flight through the barrier
      // Padding packs hold the shift: they add nothing to the shifted sum, and the M2 pass skips them.
      float s0 = 0.f, s1 = 0.f;
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
#pragma unroll
        for (int w = 0; w < 4; ++w) {
          const float2 f = UnpackPinned<T>(Word(raw[k], w));
          s0 += f.x - shift;
          s1 += f.y - shift;
        }
      }
      tw.Begin(static_cast<float>(live * kP), s0 + s1);
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        if (col_of(k) >= ncols) continue;
#pragma unroll
        for (int w = 0; w < 4; ++w) {
          const float2 f = UnpackAgain<T, 1>(Word(raw[k], w));
          tw.Add(f.x - shift);
          tw.Add(f.y - shift);
        }
      }
      const Welford w = ClusterRowWelford(tw.w, scratch, &slots[parity], refill);
      const float var = w.m2 / static_cast<float>(n);
      mean = K == Kind::kLayerNorm ? shift + w.mean : 0.f;
      rstd = RstdFrom(K == Kind::kLayerNorm ? var : var + w.mean * w.mean, p.epsilon);
      asm volatile("" ::: "memory");  // parameter loads after the reductions (see BlockPerRowPacked)
      const T* scale = params_staged ? (p.scale != nullptr ? sg : nullptr) : ScaleRow(p, row);
      const T* bias = K != Kind::kLayerNorm ? nullptr
                      : params_staged       ? (p.bias != nullptr ? sb : nullptr)
                                            : BiasRow(p, row);
      // StorePackedNormalized indexes y and the parameters alike: y from the slice's start when staged.
      T* yr = p.y + row * n + poff;
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        const int col = col_of(k);
        if (col < ncols) StorePackedNormalized<T, K>(yr, raw[k], scale, bias, col - poff, mean, rstd);
      }
    }
    if (rank == 0 && t == 0 && p.mean != nullptr) {
      p.mean[row] = mean;
      p.rstd[row] = rstd;
    }
  }
  cluster.sync();  // shared memory must outlive the peers' last reads
#endif
}

}  // namespace jk::norm
