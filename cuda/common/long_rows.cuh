// Long rows read from DRAM once (sm_90): the shared machinery of the softmax and norm "ring" tiers.
//
// One persistent CTA per SM (or one per SM of a thread-block cluster of C CTAs that split each row into
// C contiguous parts) keeps a ring of shared-memory slots, each a chunk of kConsumers * U 16-byte packs.
// A producer warp streams the chunks of the CTA's rows into the ring with 1-D bulk copies, each chunk
// completing on its slot's "full" mbarrier, and refills a slot as soon as every consumer warp has
// arrived on its "empty" mbarrier. The consumer warps make two passes over each row's chunks held in the
// ring: the statistics (per-thread partials, one block reduction, a DSMEM exchange between the CTAs of a
// cluster), then the output. While they do, the next row's first chunks are already on their way, so
// loads stay in flight through the reductions without a second read of the row.
// A row part longer than the ring can hold keeps only its first `resident` elements there; the rest
// (the tail) is read with ordinary loads in the statistics pass and again in the output pass, from L2
// (one row's tail per SM between its two reads: ~17 MB on an H200 for float32 rows of 65536).
//
// The op (softmax, LayerNorm, RMSNorm) supplies the statistics and the element-wise output:
//   Stats3 Init()                                   empty partial statistics
//   void Add<N>(Stats3&, const float (&v)[N], int valid, float shift)   the first `valid` of v (x - shift)
//   static Stats3 Merge(const Stats3&, const Stats3&)
//   static Stats3 Rebase(const Stats3&, float delta)  the same statistics for data offset by +delta (the
//                                                   partial of a CTA whose shift exceeds the row's by delta)
//   Stats3 Finalize(const Stats3&, float shift, int64_t row, bool writer) const   per-row constants for
//                                                   Apply (writer: the one thread that writes row outputs)
//   ColumnParams Load(int64_t row, int64_t col) const     the per-column parameters of one pack (norm affine)
//   void Apply(float (&v)[P], const Stats3& fin, const ColumnParams&) const
//   static constexpr bool kShift                    statistics of x - (the part's first element)
//   static constexpr int kOutputGroup               packs loaded together in the output pass (registers)
#pragma once
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "common/bulk_copy.cuh"
#include "common/launch.h"
#include "common/device.cuh"

namespace jk::long_rows {

constexpr int kMaxSlots = 16;
constexpr int kConsumers = 512;  // consumer threads per CTA; one more warp produces

struct Stats3 {
  float a = 0.f, b = 0.f, c = 0.f;
};

struct Geometry {
  int64_t rows, n;
  int64_t part;      // columns per CTA (n / cluster), a multiple of the pack
  int64_t resident;  // leading columns of the part held in the ring (multiple of the pack, <= part)
  int slots;         // ring slots (chunks), <= kMaxSlots
  int cluster;       // CTAs per row (1, 2, 4)
};

__device__ __forceinline__ void EmptyInit(uint64_t* bar, int count) {
#ifdef JK_HAS_BULK_COPY
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(SmemAddress(bar)), "r"(count) : "memory");
#endif
}
__device__ __forceinline__ void BarrierArrive(uint64_t* bar) {
#ifdef JK_HAS_BULK_COPY
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(SmemAddress(bar)) : "memory");
#endif
}
// Consumer-only CTA barrier (the producer warp never joins): named barrier 1.
__device__ __forceinline__ void ConsumerSync() {
  asm volatile("bar.sync 1, %0;\n" ::"r"(kConsumers) : "memory");
}
// Cluster exchange: this CTA's partial goes into slot `rank` of every CTA's `partials`, then one arrival
// (release, cluster scope) on every CTA's `xbar`.
__device__ __forceinline__ void RemoteStore(const float* local, int target, float v) {
#ifdef JK_HAS_BULK_COPY
  const uint32_t remote = ClusterSmemAddress(SmemAddress(local), static_cast<uint32_t>(target));
  asm volatile("st.shared::cluster.f32 [%0], %1;\n" ::"r"(remote), "f"(v) : "memory");
#endif
}
__device__ __forceinline__ void RemoteArrive(uint64_t* bar, int target) {
#ifdef JK_HAS_BULK_COPY
  const uint32_t remote = ClusterSmemAddress(SmemAddress(bar), static_cast<uint32_t>(target));
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
#endif
}

// The CTA's rank in its cluster; the kernel runs only as sm_90 code (the host checks RunsSm90Code), the
// sm_80 pass compiles it to 0.
__device__ __forceinline__ int ClusterRank() {
#ifdef JK_HAS_BULK_COPY
  return static_cast<int>(cooperative_groups::this_cluster().block_rank());
#else
  return 0;
#endif
}

__device__ __forceinline__ void StoreU4(void* p, uint4 r) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(r.x), "r"(r.y), "r"(r.z), "r"(r.w)
               : "memory");
}

template <typename T, int P>
__device__ __forceinline__ void ToFloats(const uint4& raw, float* v) {
  Pack<T, P> pk;
  memcpy(&pk, &raw, 16);
#pragma unroll
  for (int e = 0; e < P; ++e) v[e] = ToFloat(pk.v[e]);
}
template <typename T, int P>
__device__ __forceinline__ uint4 FromFloats(const float* v) {
  Pack<T, P> pk;
#pragma unroll
  for (int e = 0; e < P; ++e) pk.v[e] = FromFloat<T>(v[e]);
  uint4 raw;
  memcpy(&raw, &pk, 16);
  return raw;
}

// Warp all-reduce, then every consumer merges the warp partials in order (identical result everywhere).
// `scratch` holds 2 x 3 x 32 floats, alternated by `phase` so one barrier per reduction suffices.
template <typename Op>
__device__ __forceinline__ Stats3 ConsumerAllReduce(Stats3 s, float* scratch, int phase) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int m = 16; m > 0; m /= 2) {
    Stats3 o;
    o.a = __shfl_xor_sync(0xffffffffu, s.a, m);
    o.b = __shfl_xor_sync(0xffffffffu, s.b, m);
    o.c = __shfl_xor_sync(0xffffffffu, s.c, m);
    s = Op::Merge(s, o);
  }
  float* buf = scratch + phase * 96;
  if (lane == 0) {
    buf[warp] = s.a;
    buf[32 + warp] = s.b;
    buf[64 + warp] = s.c;
  }
  ConsumerSync();
  Stats3 r{buf[0], buf[32], buf[64]};
  #pragma unroll 1
  for (int w = 1; w < kConsumers / 32; ++w) r = Op::Merge(r, Stats3{buf[w], buf[32 + w], buf[64 + w]});
  return r;
}

template <typename T, typename Op, int U>
__global__ void __launch_bounds__(kConsumers + 32, 1) RingRowsKernel(Op op, const T* __restrict__ x, T* __restrict__ y,
                                                                     Geometry g) {
  constexpr int P = 16 / sizeof(T);
  constexpr int kChunkPacks = U * kConsumers;
  constexpr int kChunkElems = kChunkPacks * P;
  constexpr int G = U < Op::kOutputGroup ? U : Op::kOutputGroup;  // packs per step of the output pass
  extern __shared__ __align__(128) unsigned char ring_bytes[];
  __shared__ uint64_t full[kMaxSlots], empty[kMaxSlots], xbar[2];
  __shared__ float scratch[2 * 96];
  __shared__ float partials[2][4][4];  // [row parity][rank][a, b, c, shift]
  T* ring = reinterpret_cast<T*>(ring_bytes);

  const int rank = g.cluster > 1 ? ClusterRank() : 0;
  const int64_t cid = blockIdx.x / g.cluster, nclusters = gridDim.x / g.cluster;
  const int64_t my_rows = cid < g.rows ? (g.rows - 1 - cid) / nclusters + 1 : 0;
  const int64_t cpr = (g.resident + kChunkElems - 1) / kChunkElems;  // ring chunks per row
  const int64_t total = my_rows * cpr;
  const int64_t col0 = rank * g.part;                                  // this CTA's first column
  const int slots = g.slots;

  if (threadIdx.x == 0) {
    for (int s = 0; s < slots; ++s) {
      BarrierInit(&full[s]);
      EmptyInit(&empty[s], kConsumers / 32);
    }
    EmptyInit(&xbar[0], g.cluster);
    EmptyInit(&xbar[1], g.cluster);
    BarrierInitFence();
  }
  __syncthreads();
  if (g.cluster > 1) ClusterBarrier();  // remote barriers initialised before any remote arrival

  if (threadIdx.x >= kConsumers) {  // the producer warp: one lane issues every copy
    if (threadIdx.x != kConsumers) return;
    #pragma unroll 1
    for (int64_t i = 0; i < total; ++i) {
      const int s = static_cast<int>(i % slots);
      const int64_t lap = i / slots;
      if (lap > 0) {
        BarrierWait(&empty[s], static_cast<uint32_t>((lap - 1) & 1));
        FenceProxyAsync();  // the consumers' generic reads of the slot, before the copy engine's writes
      }
      const int64_t k = i / cpr, c = i - k * cpr;
      const int64_t row = cid + k * nclusters;
      const int64_t first = c * kChunkElems;
      const int64_t elems = g.resident - first < kChunkElems ? g.resident - first : kChunkElems;
      BulkLoadRow(ring + int64_t(s) * kChunkElems, x + row * g.n + col0 + first,
                  static_cast<uint32_t>(elems * sizeof(T)), &full[s]);
    }
    return;
  }

  const int t = threadIdx.x;
  const int64_t res_packs = g.resident / P, part_packs = g.part / P;
  for (int64_t k = 0; k < my_rows; ++k) {
    const int64_t row = cid + k * nclusters;
    const int64_t i0 = k * cpr;  // ring index of the row's first chunk
    // ---- pass 1: statistics
    BarrierWait(&full[i0 % slots], static_cast<uint32_t>((i0 / slots) & 1));
    const float shift = Op::kShift ? ToFloat(ring[(i0 % slots) * kChunkElems]) : 0.f;
    Stats3 st = op.Init();
    #pragma unroll 1
    for (int64_t c = 0; c < cpr; ++c) {
      const int64_t i = i0 + c;
      const int s = static_cast<int>(i % slots);
      if (c > 0) BarrierWait(&full[s], static_cast<uint32_t>((i / slots) & 1));
      const uint4* chunk = reinterpret_cast<const uint4*>(ring + int64_t(s) * kChunkElems);
      const int64_t left = res_packs - c * kChunkPacks;  // packs of this chunk, from its start
      uint4 raw[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (u * kConsumers + t < left) raw[u] = chunk[u * kConsumers + t];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (u * kConsumers + t < left) {
          float v[P];
          ToFloats<T, P>(raw[u], v);
          op.Add(st, v, P, shift);
        }
      }
    }
    #pragma unroll 1
    for (int64_t base = res_packs + t; base < part_packs; base += U * kConsumers) {  // the tail, from DRAM
      const uint4* xp = reinterpret_cast<const uint4*>(x + row * g.n + col0);
      uint4 raw[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (base + u * kConsumers < part_packs) raw[u] = xp[base + u * kConsumers];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (base + u * kConsumers < part_packs) {
          float v[P];
          ToFloats<T, P>(raw[u], v);
          op.Add(st, v, P, shift);
        }
      }
    }
    st = ConsumerAllReduce<Op>(st, scratch, static_cast<int>(k & 1));
    float row_shift = shift;
    if (g.cluster > 1) {
      const int ph = static_cast<int>(k & 1);
      if (t < g.cluster) {  // thread r sends the partial to CTA r
        RemoteStore(&partials[ph][rank][0], t, st.a);
        RemoteStore(&partials[ph][rank][1], t, st.b);
        RemoteStore(&partials[ph][rank][2], t, st.c);
        RemoteStore(&partials[ph][rank][3], t, shift);
        RemoteArrive(&xbar[ph], t);
      }
      ClusterWait(&xbar[ph], static_cast<uint32_t>((k >> 1) & 1));
      row_shift = partials[ph][0][3];
      st = Stats3{partials[ph][0][0], partials[ph][0][1], partials[ph][0][2]};
      #pragma unroll 1
      for (int r = 1; r < g.cluster; ++r) {
        const Stats3 o{partials[ph][r][0], partials[ph][r][1], partials[ph][r][2]};
        st = Op::Merge(st, Op::Rebase(o, partials[ph][r][3] - row_shift));
      }
    }
    const Stats3 fin = op.Finalize(st, row_shift, row, rank == 0 && t == 0);
    // ---- pass 2: outputs, chunk by chunk; each warp releases a chunk's slot when done with it
    T* yr = y + row * g.n + col0;
    #pragma unroll 1
    for (int64_t c = 0; c < cpr; ++c) {
      const int64_t i = i0 + c;
      const int s = static_cast<int>(i % slots);
      const uint4* chunk = reinterpret_cast<const uint4*>(ring + int64_t(s) * kChunkElems);
      const int64_t left = res_packs - c * kChunkPacks;
#pragma unroll
      for (int u0 = 0; u0 < U; u0 += G) {
        uint4 raw[G];
        typename Op::ColumnParams prm[G];
#pragma unroll
        for (int u = 0; u < G; ++u) {
          if ((u0 + u) * kConsumers + t < left) {
            raw[u] = chunk[(u0 + u) * kConsumers + t];
            prm[u] = op.Load(row, col0 + (c * kChunkPacks + (u0 + u) * kConsumers + t) * P);
          }
        }
        if (u0 + G == U) {  // the warp's last read of this slot
          __syncwarp();
          if ((t & 31) == 0) BarrierArrive(&empty[s]);
        }
#pragma unroll
        for (int u = 0; u < G; ++u) {
          const int64_t pk = c * kChunkPacks + (u0 + u) * kConsumers + t;
          if ((u0 + u) * kConsumers + t < left) {
            float v[P];
            ToFloats<T, P>(raw[u], v);
            op.Apply(v, fin, prm[u]);
            StoreU4(yr + pk * P, FromFloats<T, P>(v));
          }
        }
      }
    }
    #pragma unroll 1
    for (int64_t base = res_packs + t; base < part_packs; base += G * kConsumers) {
      const uint4* xp = reinterpret_cast<const uint4*>(x + row * g.n + col0);
      uint4 raw[G];
      typename Op::ColumnParams prm[G];
#pragma unroll
      for (int u = 0; u < G; ++u) {
        const int64_t pk = base + u * kConsumers;
        if (pk < part_packs) {
          const int4 q = __ldcs(reinterpret_cast<const int4*>(xp + pk));  // the row's last read
          memcpy(&raw[u], &q, 16);
          prm[u] = op.Load(row, col0 + pk * P);
        }
      }
#pragma unroll
      for (int u = 0; u < G; ++u) {
        const int64_t pk = base + u * kConsumers;
        if (pk < part_packs) {
          float v[P];
          ToFloats<T, P>(raw[u], v);
          op.Apply(v, fin, prm[u]);
          StoreU4(yr + pk * P, FromFloats<T, P>(v));
        }
      }
    }
  }
  // No CTA of a cluster exits while another may still store its partials into its shared memory (the
  // exchange's last RemoteStore); the producer warp has exited, which the cluster barrier allows.
  if (g.cluster > 1) ClusterBarrier();
}

}  // namespace jk::long_rows

// ---- host side (included by .cu files only) ---------------------------------------------------------
namespace jk::long_rows {

// The ring tier's shape: CTAs per row, packs per consumer thread per chunk (chunk = U * 8 KB), and the
// fewest ring slots kept free for the next row's chunks (rows longer than the ring minus these keep a
// tail in DRAM/L2). enabled = false: the op's other tiers.
struct RingChoice {
  bool enabled = false;
  int cluster = 1, u = 4, lookahead = 3;
};
// "off", or "ring C U L" (C in {1, 2, 4}, U in {2, 4}, L >= 1); anything else: `fallback`.
inline RingChoice ParseRing(const char* s, RingChoice fallback) {
  if (s == nullptr) return fallback;
  char name[8] = {0};
  int c = 1, u = 4, l = 3;
  const int got = std::sscanf(s, "%7s %d %d %d", name, &c, &u, &l);
  if (got >= 1 && std::strcmp(name, "off") == 0) return RingChoice{};
  if (got >= 1 && std::strcmp(name, "ring") == 0 && (c == 1 || c == 2 || c == 4) && (u == 2 || u == 4) && l >= 1)
    return RingChoice{true, c, u, l};
  return fallback;
}

// A default-dispatch entry: rows of [min_n, max_n] elements of elem_bytes each take `choice`. The ops list
// theirs (SoftmaxRingChoice, norm_long.cu's DefaultChoice), each entry backed by a measurement.
struct RingRule {
  int elem_bytes;
  int64_t min_n, max_n;
  RingChoice choice;
};
inline RingChoice RuleFor(std::initializer_list<RingRule> rules, int elem_bytes, int64_t n) {
  for (const RingRule& r : rules)
    if (r.elem_bytes == elem_bytes && n >= r.min_n && n <= r.max_n) return r.choice;
  return RingChoice{};
}

template <typename T, typename Op, int U>
cudaError_t LaunchRingU(const Op& op, const T* x, T* y, int64_t rows, int64_t n, const RingChoice& ch,
                        cudaStream_t stream) {
  constexpr int P = 16 / sizeof(T);
  constexpr int64_t kChunkElems = int64_t{U} * kConsumers * P, kChunkBytes = kChunkElems * sizeof(T);
  if (n % (int64_t{ch.cluster} * P) != 0) return cudaErrorNotSupported;
  auto* kernel = RingRowsKernel<T, Op, U>;
  constexpr int kMaxDevices = 64;
  static int dynamic_limit[kMaxDevices] = {};
  static int max_clusters[kMaxDevices][3] = {};
  // Setup failures are returned, not turned into a silent fallback: a forced ring shape (the tests, the lab)
  // must not pass while another tier ran. A failed runtime call also leaves its error as the thread's last
  // error, which the next launch would report against an unrelated op: consumed here.
  auto failed = [](cudaError_t e) {
    (void)cudaGetLastError();
    return e;
  };
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return failed(e);
  if (dev < 0 || dev >= kMaxDevices) return cudaErrorNotSupported;
  if (dynamic_limit[dev] == 0) {
    int optin = 0;
    cudaFuncAttributes attr;
    if (cudaError_t e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev); e != cudaSuccess)
      return failed(e);
    if (cudaError_t e = cudaFuncGetAttributes(&attr, kernel); e != cudaSuccess) return failed(e);
    const int limit = static_cast<int>(std::min<int64_t>(optin - static_cast<int>(attr.sharedSizeBytes),
                                                         kMaxSlots * kChunkBytes) /
                                       kChunkBytes * kChunkBytes);
    if (limit < 2 * kChunkBytes) return cudaErrorNotSupported;  // a GPU with little shared memory
    if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, limit);
        e != cudaSuccess)
      return failed(e);
    dynamic_limit[dev] = limit;
  }
  const int slots = static_cast<int>(dynamic_limit[dev] / kChunkBytes);
  const int64_t part = n / ch.cluster;
  const int64_t need = (part + kChunkElems - 1) / kChunkElems;
  const int64_t resident_chunks = need + ch.lookahead <= slots ? need : slots - ch.lookahead;
  if (resident_chunks < 1) return cudaErrorNotSupported;
  Geometry g{rows, n, part, std::min(part, resident_chunks * kChunkElems), slots, ch.cluster};
  const int smem = slots * static_cast<int>(kChunkBytes);

  cudaLaunchConfig_t cfg = {};
  cfg.blockDim = dim3(kConsumers + 32);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = ch.cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int64_t ctas = NumSMs();
  if (ch.cluster > 1) {
    int& mc = max_clusters[dev][ch.cluster == 2 ? 1 : 2];
    if (mc == 0) {
      cfg.gridDim = dim3(static_cast<unsigned>(ch.cluster * 16));
      if (cudaError_t e = cudaOccupancyMaxActiveClusters(&mc, kernel, &cfg); e != cudaSuccess) {
        mc = 0;
        return failed(e);
      }
      if (mc < 1) return cudaErrorNotSupported;  // no cluster of this size fits: the other tiers
    }
    ctas = int64_t{mc} * ch.cluster;
  }
  ctas = std::min(ctas, rows * ch.cluster);
  cfg.gridDim = dim3(static_cast<unsigned>(ctas));
  const cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, op, x, y, g);
  return e != cudaSuccess ? e : LastLaunchError();
}

template <typename T, typename Op>
cudaError_t LaunchRing(const Op& op, const T* x, T* y, int64_t rows, int64_t n, const RingChoice& ch,
                       cudaStream_t stream) {
  if (!ch.enabled || rows == 0 || n == 0) return cudaErrorNotSupported;
  return ch.u == 2 ? LaunchRingU<T, Op, 2>(op, x, y, rows, n, ch, stream)
                   : LaunchRingU<T, Op, 4>(op, x, y, rows, n, ch, stream);
}

}  // namespace jk::long_rows
