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
//
// With kExchange the CTAs trade their states through ClusterExchange (common/cluster_exchange.cuh: pushed
// into the peers' shared memory, one mbarrier wait, no cluster barrier per row) instead of slots read after
// a cluster barrier.
#pragma once
#include <cooperative_groups.h>

#include "common/cluster_exchange.cuh"
#include "norm/norm_packed_block.cuh"

namespace jk::norm {

namespace cg = cooperative_groups;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// The row's Welford state from every thread's: the CTA's merge, then the cluster's after one barrier.
template <bool kFast = false>
__device__ __forceinline__ Welford ClusterRowWelford(Welford w, float* scratch, float4* slot) {
  w = BlockAllReduceWelford<true, kFast>(w, scratch);
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) *slot = make_float4(w.count, w.mean, w.m2, 0.f);
  cluster.sync();  // every rank's state for this row is written and visible
  Welford r;
  for (unsigned k = 0; k < cluster.num_blocks(); ++k) {
    const float4 s = *cluster.map_shared_rank(slot, k);
    Welford o;
    o.count = s.x, o.mean = s.y, o.m2 = s.z;
    if (k == 0) r = o;
    else r.Merge<kFast>(o);
  }
  return r;
}

// A CTA's reduced state `w` pushed to its peers (by the thread with `publisher` set), theirs merged in rank order.
template <bool kFast = false>
__device__ __forceinline__ Welford ExchangeMerge(const Welford& w, ClusterExchange<float4>& ex, int parity, uint32_t use,
                                                 bool publisher, unsigned rank, unsigned ranks) {
  if (publisher) ex.Publish(parity, make_float4(w.count, w.mean, w.m2, 0.f), rank, ranks);
  ex.Wait(parity, use);
  Welford r;
  for (unsigned k = 0; k < ranks; ++k) {
    const float4 s = ex.slot[parity][k];
    Welford o;
    o.count = s.x, o.mean = s.y, o.m2 = s.z;
    if (k == 0) r = o;
    else r.Merge<kFast>(o);
  }
  return r;
}

// The same through the exchange: the CTA's merge, then the cluster's.
template <bool kFast = false>
__device__ __forceinline__ Welford ExchangeRowWelford(Welford w, float* scratch, ClusterExchange<float4>& ex,
                                                      int parity, uint32_t use) {
  w = BlockAllReduceWelford<true, kFast>(w, scratch);
  cg::cluster_group cluster = cg::this_cluster();
  return ExchangeMerge<kFast>(w, ex, parity, use, threadIdx.x == 0, cluster.block_rank(), cluster.num_blocks());
}
#endif

// This thread's Welford state of `count` values: Begin with their sum (the mean), then Add each value (the
// squared deviations from that mean): two exact passes over registers.
struct ThreadWelford {
  Welford w;
  template <bool kFast = false>
  __device__ __forceinline__ void Begin(float count, float sum) {
    w.count = count;
    w.mean = count > 0.f ? (kFast ? __fdividef(sum, count) : sum / count) : 0.f;
  }
  __device__ __forceinline__ void Add(float v) {
    const float d = v - w.mean;
    w.m2 = fmaf(d, d, w.m2);
  }
};

// RMSNorm's state: mean 0 and M2 = the sum of squares, so the Welford merges (whose mean difference is then 0)
// add the sums exactly and `var + mean^2` below is mean(x^2). One pass over the registers instead of
// LayerNorm's two; the float32 instantiation had also spilled two packs to local memory (80 bytes of stack)
// with the two passes.
__device__ __forceinline__ Welford SquaresState(float count, float sum_sq) {
  Welford w;
  w.count = count;
  w.m2 = sum_sq;
  return w;
}

// A thread's Welford state of its float32 packs v[k] with inside(k) (`live` of them): RMSNorm's sum of squares in
// one pass (SquaresState), LayerNorm's two exact passes over x - shift (ThreadWelford). The float32 paths of
// ClusterRowsNorm and ClusterRowPairsNorm (norm_cluster_pairs.cuh).
template <Kind K, bool kFast, typename T, int kP, int kPacks, typename Inside>
__device__ __forceinline__ Welford Float32PacksState(const Pack<T, kP> (&v)[kPacks], int live, float shift,
                                                     Inside inside) {
  if constexpr (K == Kind::kRmsNorm) {
    float q = 0.f;
#pragma unroll
    for (int k = 0; k < kPacks; ++k)
      if (inside(k))
#pragma unroll
        for (int e = 0; e < kP; ++e) q = fmaf(v[k].v[e], v[k].v[e], q);
    return SquaresState(static_cast<float>(live * kP), q);
  } else {
    ThreadWelford tw;
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < kPacks; ++k)
      if (inside(k))
#pragma unroll
        for (int e = 0; e < kP; ++e) s += v[k].v[e] - shift;
    tw.Begin<kFast>(static_cast<float>(live * kP), s);
#pragma unroll
    for (int k = 0; k < kPacks; ++k)
      if (inside(k))
#pragma unroll
        for (int e = 0; e < kP; ++e) tw.Add(v[k].v[e] - shift);
    return tw.w;
  }
}

// kLean's parameter packs as raw words, absent parameters as ones and zeros (none loaded where !live).
struct ParamWords {
  uint4 g, b;
};
template <typename T, Kind K>
__device__ __forceinline__ ParamWords LoadParamWords(const T* scale, const T* bias, int col, bool live) {
  ParamWords r{make_uint4(kOnePair<T>, kOnePair<T>, kOnePair<T>, kOnePair<T>), make_uint4(0, 0, 0, 0)};
  if (live) {
    if (scale != nullptr) r.g = LoadWords(scale + col);
    if (K == Kind::kLayerNorm && bias != nullptr) r.b = LoadWords(bias + col);
  }
  return r;
}
// A pack of outputs from x's pack and its parameters' words (NormalizeWith).
template <Kind K, typename T, int P>
__device__ __forceinline__ Pack<T, P> NormalizeWords(const Pack<T, P>& v, float mean, float rstd, const ParamWords& w,
                                                     bool has_scale, bool has_bias) {
  Pack<T, P> g, b;
  memcpy(&g, &w.g, 16);
  memcpy(&b, &w.b, 16);
  return NormalizeWith<K, T, P>(v, mean, rstd, g, b, has_scale, has_bias);
}

// kSmemScale: the scale is one row (no per-group parameters) and each thread copies its kPacks scale packs once
// into its own slots of dynamic shared memory (kPacks x blockDim.x x 16 bytes): a persistent CTA always owns the
// same columns, so every later row reads them from there instead of from L2 (which otherwise moves as many
// parameter bytes as x and y together, bench/lab/s14_h200.md call 5). Each thread reads back only the slots it
// wrote: no barrier.
//
// kLean (the launcher's default for 16-bit rows; JK_NORM_LEAN forces it): the merges' divisions by the special-function
// unit (Welford::Merge<true>); the output pass's parameter packs loaded one pack ahead (pack 0's before the
// reductions), so a row waits for one L2 round trip of parameters instead of kPacks of them in a row (each pack's
// loads sat behind a branch on its column); 16-bit rows without the shift (kUnshifted below). Fewer instructions
// mattered for 16-bit LayerNorm, which issues on about two thirds of its cycles (bench/lab/s14_h200.md).
template <typename T, Kind K, int kPacks, bool kExchange, bool kSmemScale = false, bool kLean = false,
          bool kFull = false>
__global__ void __launch_bounds__(512, 2)  // <= 64 registers: two CTAs of 512 per SM
    ClusterRowsNorm(Params<T> p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kP = 16 / sizeof(T);  // elements per pack
  __shared__ float scratch[3 * 32];
  __shared__ float4 slots[2];
  __shared__ ClusterExchange<float4> ex;
  extern __shared__ uint4 scale_slots[];  // kSmemScale: [kPacks][blockDim.x]
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), ranks = cluster.num_blocks();
  const int64_t rows = p.outer, n = p.n;
  const int ncols = static_cast<int>(n);  // < 2^31 in this tier (the launcher checks)
  const int t = static_cast<int>(threadIdx.x), lanes = static_cast<int>(blockDim.x);
  auto col_of = [&](int k) { return ((static_cast<int>(rank) * kPacks + k) * lanes + t) * kP; };
  // kFull (the launcher's promise: n = ranks x kPacks x blockDim.x x kP): every pack inside the row, no checks.
  auto inside = [&](int k) { return kFull || col_of(k) < ncols; };
  uint4* const my_scale = scale_slots + t;  // this thread's slot k at my_scale[k * lanes]
  if constexpr (kSmemScale) {
#pragma unroll
    for (int k = 0; k < kPacks; ++k)
      if (inside(k)) my_scale[k * lanes] = *reinterpret_cast<const uint4*>(p.scale + col_of(k));
  }
  if constexpr (kExchange) ex.Init();
  auto row_state = [&](const Welford& w, int parity, uint32_t use) {
    if constexpr (kExchange) return ExchangeRowWelford<kLean>(w, scratch, ex, parity, use);
    else return ClusterRowWelford<kLean>(w, scratch, &slots[parity]);
  };
  // kLean: pack k's parameter words, the scale from shared memory where kSmemScale put it there.
  auto params_of = [&](int k, const T* scale, const T* bias) {
    const bool live = inside(k);
    ParamWords r = LoadParamWords<T, K>(kSmemScale ? nullptr : scale, bias, col_of(k), live);
    if (kSmemScale && live) r.g = my_scale[k * lanes];
    return r;
  };
  const float inv_n = 1.f / static_cast<float>(n);
  uint32_t it = 0;  // this CTA's rows so far: slot set it % 2, its (it / 2)-th use
  for (int64_t row = blockIdx.x / ranks; row < rows; row += gridDim.x / ranks, ++it) {
    const int parity = static_cast<int>(it & 1u);
    const uint32_t use = it >> 1;
    const T* xr = p.x + row * n;
    // kUnshifted: 16-bit rows in the lean form take no shift. A thread's 64 values of at most 11 significant bits
    // sum exactly in float32 wherever they share a few binades (where they do not, the variance dwarfs the
    // rounding), so its two passes over registers are exact without it; the shift cost a load per row and
    // two additions per element (the sum's and the deviation's). Only the merged means' rounding moves: within
    // 0.88 float32 ulp of the mean against 0.50 shifted (bench/lab/s31_unshifted_check.py, H200).
    constexpr bool kUnshifted = kLean && sizeof(T) == 2;
    const float shift = kUnshifted ? 0.f : RowShift<K>(p.x, row, rows, n);
    // Without the shift's load, ptxas hoisted the packs' 64-bit addresses out of the row loop and spilled them (48
    // bytes, reloaded every row): the row's base pointer made opaque keeps them per row. The loads become generic
    // (LD.E.128), as measured; hiding the thread's first column instead kept global loads but hid the stores' 16-byte
    // alignment too, split each store in four and lost (84% -> 68% of copy, bench/lab/s31_h200.md call 7).
    if constexpr (kUnshifted) asm volatile("" : "+l"(xr));
    ThreadWelford tw;
    float mean = 0.f, rstd;
    if constexpr (sizeof(T) == 4) {
      Pack<T, kP> v[kPacks];  // x as loaded; the passes subtract the shift
      int live = 0;
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        const int col = col_of(k);
        if (inside(k)) {
          v[k] = LoadPack<T, kP>(xr + col);
          ++live;
        }
      }
      tw.w = Float32PacksState<K, kLean>(v, live, shift, inside);
      ParamWords next{};
      if constexpr (kLean) next = params_of(0, ScaleRow(p, row), BiasRow(p, row));  // in flight through the reductions
      const Welford w = row_state(tw.w, parity, use);
      const float var = kLean ? w.m2 * inv_n : w.m2 / static_cast<float>(n);
      mean = K == Kind::kLayerNorm ? shift + w.mean : 0.f;
      rstd = RstdFrom(K == Kind::kLayerNorm ? var : var + w.mean * w.mean, p.epsilon);
      asm volatile("" ::: "memory");  // parameter loads after the reductions (see BlockPerRowPacked)
      const T* scale = ScaleRow(p, row);
      const T* bias = BiasRow(p, row);
      T* yr = p.y + row * n;
      // Two output loops whose conditions carry kLean: one compiles away.
#pragma unroll
      for (int k = 0; k < kPacks && kLean; ++k) {
        const ParamWords cur = next;
        if (k + 1 < kPacks) next = params_of(k + 1, scale, bias);
        const int col = col_of(k);
        if (!inside(k)) continue;
        StorePack<T, kP>(yr + col, NormalizeWords<K, T, kP>(v[k], mean, rstd, cur, kSmemScale || scale != nullptr,
                                                             bias != nullptr));
      }
#pragma unroll
      for (int k = 0; k < kPacks && !kLean; ++k) {
        const int col = col_of(k);
        if (!inside(k)) continue;
        if constexpr (kSmemScale) {
          const uint4 gw = my_scale[k * lanes];
          Pack<T, kP> g, b;
          memcpy(&g, &gw, 16);
          if (K == Kind::kLayerNorm && bias != nullptr) b = LoadPack<T, kP>(bias + col);
          StorePack<T, kP>(yr + col, NormalizeWith<K, T, kP>(v[k], mean, rstd, g, b, true, bias != nullptr));
        } else {
          StorePack<T, kP>(yr + col, NormalizePack<K, T, kP>(v[k], mean, rstd, scale, bias, col));
        }
      }
    } else {
      uint32_t pad = 0;
      if constexpr (K == Kind::kLayerNorm && !kUnshifted) {
        const uint16_t bits = *reinterpret_cast<const uint16_t*>(xr);
        pad = uint32_t{bits} * 0x10001u;
      }
      uint4 raw[kPacks];
      int live = 0;
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        const int col = col_of(k);
        raw[k] = inside(k) ? LoadWords(xr + col) : make_uint4(pad, pad, pad, pad);
        if constexpr (K == Kind::kLayerNorm) live += inside(k);
      }
      // RMSNorm counts its packs inside the row by formula: counted in the loop, its instantiations kept five
      // 64-bit pack offsets in local memory (40-56 bytes of stack, reloaded every row); LayerNorm's did not spill.
      if constexpr (K == Kind::kRmsNorm) {
        live = kFull ? kPacks : min(kPacks, max(0, (ncols - col_of(0) + lanes * kP - 1) / (lanes * kP)));
        // RMSNorm: the sum of squares in one pass (see SquaresState); padding packs hold zeros.
        float q0 = 0.f, q1 = 0.f;
#pragma unroll
        for (int k = 0; k < kPacks; ++k) {
#pragma unroll
          for (int w = 0; w < 4; ++w) {
            const float2 f = UnpackPinned<T>(Word(raw[k], w));
            q0 = fmaf(f.x, f.x, q0);
            q1 = fmaf(f.y, f.y, q1);
          }
        }
        tw.w = SquaresState(static_cast<float>(live * kP), q0 + q1);
      } else {
        // Padding packs hold the shift (kUnshifted: zeros): they add nothing to the shifted sum, and the M2 pass
        // skips them.
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
        tw.Begin<kLean>(static_cast<float>(live * kP), s0 + s1);
#pragma unroll
        for (int k = 0; k < kPacks; ++k) {
          if (!inside(k)) continue;
#pragma unroll
          for (int w = 0; w < 4; ++w) {
            const float2 f = UnpackAgain<T, 1>(Word(raw[k], w));
            tw.Add(f.x - shift);
            tw.Add(f.y - shift);
          }
        }
      }
      ParamWords next{};
      if constexpr (kLean) {  // in flight through the reductions
        next = params_of(0, ScaleRow(p, row), K == Kind::kLayerNorm ? BiasRow(p, row) : nullptr);
      }
      const Welford w = row_state(tw.w, parity, use);
      const float var = kLean ? w.m2 * inv_n : w.m2 / static_cast<float>(n);
      mean = K == Kind::kLayerNorm ? shift + w.mean : 0.f;
      rstd = RstdFrom(K == Kind::kLayerNorm ? var : var + w.mean * w.mean, p.epsilon);
      asm volatile("" ::: "memory");  // parameter loads after the reductions (see BlockPerRowPacked)
      const T* scale = ScaleRow(p, row);
      const T* bias = K == Kind::kLayerNorm ? BiasRow(p, row) : nullptr;
      T* yr = p.y + row * n;
#pragma unroll
      for (int k = 0; k < kPacks && kLean; ++k) {
        const ParamWords cur = next;
        if (k + 1 < kPacks) next = params_of(k + 1, scale, bias);
        const int col = col_of(k);
        if (inside(k)) StorePackedNormalizedGB<T, K>(yr, raw[k], cur.g, cur.b, col, mean, rstd);
      }
#pragma unroll
      for (int k = 0; k < kPacks && !kLean; ++k) {
        const int col = col_of(k);
        if (!inside(k)) continue;
        if constexpr (kSmemScale)
          StorePackedNormalizedWith<T, K>(yr, raw[k], my_scale[k * lanes], bias, col, mean, rstd);
        else
          StorePackedNormalized<T, K>(yr, raw[k], scale, bias, col, mean, rstd);
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

// Rows held partly in registers, partly in shared memory (as softmax_cluster.cuh's ClusterRowsHybridKernel): each
// thread keeps kPacks 16-byte packs in registers and kStaged more in dynamic shared memory, copied there by its own
// cp.async (a thread reads back only the slots it filled: no CTA barrier), so a CTA of 512 holds twice the row of
// ClusterRowsNorm at the 64-register cap and the cluster is half as wide (float32 32768: one CTA; 65536: two). The
// staged packs are normalised first and the next row's copies into their slots issued before the register packs'
// stores.
// Statistics as ClusterRowsNorm's float32 path. Written for any element size (packs widened as read); the
// launcher builds float32 only (its 16-bit forms lost, see norm_cluster.cu).
// kLean: as ClusterRowsNorm's (the parameters one pack ahead through the staged packs, then the register packs).
template <typename T, Kind K, int kPacks, int kStaged, bool kLean = false>
__global__ void __launch_bounds__(512, 2)  // <= 64 registers: two CTAs of 512 per SM
    ClusterRowsNormHybrid(Params<T> p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kP = 16 / sizeof(T);  // elements per pack
  extern __shared__ uint4 staged[];     // [kStaged][blockDim.x]: each thread's own packs
  __shared__ float scratch[3 * 32];
  __shared__ ClusterExchange<float4> ex;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), ranks = cluster.num_blocks();
  const int64_t rows = p.outer, n = p.n;
  const int ncols = static_cast<int>(n);  // < 2^31 in this tier (the launcher checks)
  const int t = static_cast<int>(threadIdx.x), lanes = static_cast<int>(blockDim.x);
  // Pack k of this thread: registers for k < kPacks, staged slot k - kPacks after.
  const auto col_of = [&](int k) { return ((static_cast<int>(rank) * (kPacks + kStaged) + k) * lanes + t) * kP; };
  const auto slot = [&](int q) { return *reinterpret_cast<const Pack<T, kP>*>(&staged[q * lanes + t]); };
  const auto stage = [&](int64_t row) {
    const T* xr = p.x + row * n;
#pragma unroll 1
    for (int q = 0; q < kStaged; ++q) {
      const int col = col_of(kPacks + q);
      if (col < ncols) CopyAsync16(&staged[q * lanes + t], xr + col);
    }
    CopyAsyncCommit();
  };
  if (ranks > 1) ex.Init();
  const int64_t step = gridDim.x / ranks;
  int64_t row = blockIdx.x / ranks;
  if (row < rows) stage(row);
  const float inv_n = 1.f / static_cast<float>(n);
  uint32_t it = 0;  // this CTA's rows so far: exchange parity it % 2, its (it / 2)-th use
  for (; row < rows; row += step, ++it) {
    const T* xr = p.x + row * n;
    const float shift = RowShift<K>(p.x, row, rows, n);
    Pack<T, kP> v[kPacks];
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const int col = col_of(k);
      if (col < ncols) v[k] = LoadPack<T, kP>(xr + col);
      else v[k] = Pack<T, kP>{};  // defined on every path: else the packs went to local memory
    }
    // This thread's packs inside the row: those with col_of(k) < ncols, k < kPacks + kStaged.
    const int live = min(kPacks + kStaged, max(0, (ncols - col_of(0) + lanes * kP - 1) / (lanes * kP)));
    CopyAsyncWaitAll();
    ThreadWelford tw;
    if constexpr (K == Kind::kRmsNorm) {
      float q2 = 0.f;  // the sum of squares in one pass (see SquaresState)
#pragma unroll
      for (int k = 0; k < kPacks; ++k)
        if (col_of(k) < ncols)
#pragma unroll
          for (int e = 0; e < kP; ++e) q2 = fmaf(ToFloat(v[k].v[e]), ToFloat(v[k].v[e]), q2);
#pragma unroll 1
      for (int q = 0; q < kStaged; ++q) {
        if (col_of(kPacks + q) >= ncols) continue;
        const Pack<T, kP> f = slot(q);
#pragma unroll
        for (int e = 0; e < kP; ++e) q2 = fmaf(ToFloat(f.v[e]), ToFloat(f.v[e]), q2);
      }
      tw.w = SquaresState(static_cast<float>(live * kP), q2);
    } else {
      // The register packs: two exact passes (their sum, then the squared deviations from their mean). The staged
      // packs: one shared-memory pass, each pack's exact (mean, M2) from its own registers merged in (Chan), so
      // the slots are read twice per row (here and at the store) instead of three times.
      float s = 0.f;
#pragma unroll
      for (int k = 0; k < kPacks; ++k)
        if (col_of(k) < ncols)
#pragma unroll
          for (int e = 0; e < kP; ++e) s += ToFloat(v[k].v[e]) - shift;
      tw.Begin<kLean>(static_cast<float>(min(live, kPacks) * kP), s);
#pragma unroll
      for (int k = 0; k < kPacks; ++k)
        if (col_of(k) < ncols)
#pragma unroll
          for (int e = 0; e < kP; ++e) tw.Add(ToFloat(v[k].v[e]) - shift);
#pragma unroll 1
      for (int q = 0; q < kStaged; ++q) {
        if (col_of(kPacks + q) >= ncols) continue;
        const Pack<T, kP> f = slot(q);
        float d[kP], ps = 0.f;
#pragma unroll
        for (int e = 0; e < kP; ++e) {
          d[e] = ToFloat(f.v[e]) - shift;
          ps += d[e];
        }
        Welford o;
        o.count = static_cast<float>(kP);
        o.mean = ps * (1.f / kP);
#pragma unroll
        for (int e = 0; e < kP; ++e) o.m2 = fmaf(d[e] - o.mean, d[e] - o.mean, o.m2);
        tw.w.Merge<kLean>(o);
      }
    }
    const Welford w = ranks > 1 ? ExchangeRowWelford<kLean>(tw.w, scratch, ex, static_cast<int>(it & 1u), it >> 1)
                                : BlockAllReduceWelford<true, kLean>(tw.w, scratch);
    const float var = kLean ? w.m2 * inv_n : w.m2 / static_cast<float>(n);
    const float mean = K == Kind::kLayerNorm ? shift + w.mean : 0.f;
    const float rstd = RstdFrom(K == Kind::kLayerNorm ? var : var + w.mean * w.mean, p.epsilon);
    asm volatile("" ::: "memory");  // parameter loads after the reductions (see BlockPerRowPacked)
    const T* scale = ScaleRow(p, row);
    const T* bias = BiasRow(p, row);
    T* yr = p.y + row * n;
    if constexpr (kLean) {
      const bool has_scale = scale != nullptr, has_bias = K == Kind::kLayerNorm && bias != nullptr;
      auto params_of = [&](int k) { return LoadParamWords<T, K>(scale, bias, col_of(k), col_of(k) < ncols); };
      ParamWords next = params_of(kPacks);
#pragma unroll 1
      for (int q = 0; q < kStaged; ++q) {
        const ParamWords cur = next;
        next = params_of(q + 1 < kStaged ? kPacks + q + 1 : 0);  // after the last slot: register pack 0
        const int col = col_of(kPacks + q);
        if (col < ncols) StorePack<T, kP>(yr + col, NormalizeWords<K, T, kP>(slot(q), mean, rstd, cur, has_scale, has_bias));
      }
      if (row + step < rows) stage(row + step);  // the slots' reads above are done: their values were stored
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        const ParamWords cur = next;
        if (k + 1 < kPacks) next = params_of(k + 1);
        const int col = col_of(k);
        if (col < ncols) StorePack<T, kP>(yr + col, NormalizeWords<K, T, kP>(v[k], mean, rstd, cur, has_scale, has_bias));
      }
    } else {
#pragma unroll 1
      for (int q = 0; q < kStaged; ++q) {
        const int col = col_of(kPacks + q);
        if (col < ncols) StorePack<T, kP>(yr + col, NormalizePack<K, T, kP>(slot(q), mean, rstd, scale, bias, col));
      }
      if (row + step < rows) stage(row + step);  // the slots' reads above are done: their values were stored
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        const int col = col_of(k);
        if (col < ncols) StorePack<T, kP>(yr + col, NormalizePack<K, T, kP>(v[k], mean, rstd, scale, bias, col));
      }
    }
    if (rank == 0 && t == 0 && p.mean != nullptr) {
      p.mean[row] = mean;
      p.rstd[row] = rstd;
    }
  }
  if (ranks > 1) cluster.sync();  // shared memory must outlive the peers' last reads
#endif
}

}  // namespace jk::norm
