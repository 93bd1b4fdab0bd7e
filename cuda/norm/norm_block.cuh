// LayerNorm / RMSNorm tiers 2 and 2b: a CTA (or a cluster) per row with the row in registers
// (BlockPerRowRegisters), and persistent CTAs staging rows in shared memory by the bulk copy engine
// (BlockPerRowBulkSmem). Device code only; the launcher is norm_launch.cu. Shared parts: norm_kernels.cuh.
#pragma once
#include <cooperative_groups.h>

#include "norm/norm_kernels.cuh"

namespace jk::norm {

// ---- tier 2: a block (or a thread-block cluster) per row, the row in registers --------------------
// The row is split into `cluster` contiguous chunks of blockDim.x * C * P elements, one per CTA of the
// cluster; each thread holds C packs. Block partial sums are exchanged through distributed shared
// memory, so a 64K-element row can be spread over several SMs' registers (measured slower than the
// two-read kernel for long rows; the launcher uses cluster == 1).
// Clusters exist from sm_90 on; the sm_80 build keeps the code path but never takes it (cluster == 1).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define JK_HAS_CLUSTERS 1
#endif


// Sum over the block and then over the cluster; every thread gets the same, deterministically ordered,
// result. `slot` is this CTA's shared-memory cell for the exchange (one per reduction of a row).
__device__ __forceinline__ float RowAllReduceSum(float v, float* scratch, float* slot, int cluster) {
  v = BlockAllReduce(v, SumOp(), scratch);
  if (cluster == 1) return v;
  if (threadIdx.x == 0) *slot = v;
  ClusterBarrier();
  float total = 0.f;
#ifdef JK_HAS_CLUSTERS
  namespace cg = cooperative_groups;
  cg::cluster_group cl = cg::this_cluster();
  for (int r = 0; r < cluster; ++r) total += *cl.map_shared_rank(slot, r);
#endif
  return total;
}

// At most 512 threads: the 128 registers per thread this allows hold C = 8 packs converted to float32
// without spilling (1024 threads would cap them at 64).
constexpr int kBlockMaxThreads = 512;

// kLoadedParams: the output pass loads the parameter packs and then normalises (NormalizeWith) instead of
// NormalizePack; the same arithmetic, but ptxas allocates the bf16 LayerNorm kernel with 4 packs per thread
// in 64 registers instead of 103 (4 CTAs of 256 threads per SM instead of 2). Not measured on a GPU yet:
// only JK_NORM_TIER=block-lean / proposed launch it.
template <typename T, Kind K, int P, int C, bool kLoadedParams>
__device__ __forceinline__ void BlockPerRowRegistersBody(const Params<T>& p, int cluster) {
  __shared__ float scratch[32];
  __shared__ float slots[2];
  const int64_t rows = p.outer, n = p.n;
  const float inv_n = 1.f / static_cast<float>(n);
  const int rank = static_cast<int>(blockIdx.x % cluster);
  const int64_t chunk = static_cast<int64_t>(blockDim.x) * C * P;
  // The loop bound is uniform across a cluster: all its CTAs work on the same row.
  for (int64_t row = blockIdx.x / cluster; row < rows; row += gridDim.x / cluster) {
    const T* x = p.x + row * n + rank * chunk;
    const int64_t limit = n - rank * chunk;  // columns of this CTA's chunk that exist (may be <= 0)
    Pack<T, P> v[C];
    const float shift = RowShift<K>(p.x, row, rows, n);  // the row's first element, for every CTA
    float sum = 0.f;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int64_t col = (static_cast<int64_t>(c) * blockDim.x + threadIdx.x) * P;
      if (col < limit) {
        v[c] = LoadPack<T, P>(x + col);
      } else {
#pragma unroll
        for (int e = 0; e < P; ++e) v[c].v[e] = FromFloat<T>(shift);  // adds nothing (see the group tier)
      }
#pragma unroll
      for (int e = 0; e < P; ++e) {
        const float f = ToFloat(v[c].v[e]);
        sum += K == Kind::kLayerNorm ? f - shift : f * f;
      }
    }
    sum = RowAllReduceSum(sum, scratch, &slots[0], cluster);
    float mean = 0.f, rstd;
    if constexpr (K == Kind::kLayerNorm) {
      const float shifted_mean = sum * inv_n;
      mean = shift + shifted_mean;
      float sq = 0.f;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t col = (static_cast<int64_t>(c) * blockDim.x + threadIdx.x) * P;
        if (col < limit) {
#pragma unroll
          for (int e = 0; e < P; ++e) {
            const float d = (ToFloat(v[c].v[e]) - shift) - shifted_mean;
            sq += d * d;
          }
        }
      }
      rstd = RstdFrom(RowAllReduceSum(sq, scratch, &slots[1], cluster) * inv_n, p.epsilon);
    } else {
      rstd = RstdFrom(sum * inv_n, p.epsilon);
    }
    const T* scale = ScaleRow(p, row);
    const T* bias = BiasRow(p, row);
    const int64_t offset = rank * chunk;
    T* y = p.y + row * n + offset;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int64_t col = (static_cast<int64_t>(c) * blockDim.x + threadIdx.x) * P;
      if (col >= limit) continue;
      if constexpr (kLoadedParams) {
        Pack<T, P> g, b;
        if (scale != nullptr) g = LoadPack<T, P>(scale + offset + col);
        if (K == Kind::kLayerNorm && bias != nullptr) b = LoadPack<T, P>(bias + offset + col);
        StorePack<T, P>(y + col, NormalizeWith<K, T, P>(v[c], mean, rstd, g, b, scale != nullptr, bias != nullptr));
      } else {
        StorePack<T, P>(y + col, NormalizePack<K, T, P>(v[c], mean, rstd, scale, bias, offset + col));
      }
    }
    if (rank == 0 && threadIdx.x == 0 && p.mean != nullptr) {
      p.mean[row] = mean;
      p.rstd[row] = rstd;
    }
    // No CTA may reuse its slots (next row) or exit while a peer still reads them.
    if (cluster > 1) ClusterBarrier();
  }
}

template <typename T, Kind K, int P, int C, bool kLoadedParams = false>
__global__ void __launch_bounds__(kBlockMaxThreads) BlockPerRowRegisters(Params<T> p, int cluster) {
  BlockPerRowRegistersBody<T, K, P, C, kLoadedParams>(p, cluster);
}

// The same capped at 64 registers, so two CTAs of 512 threads share an SM (two rows in flight): float32
// LayerNorm with C = 8 takes 85 registers otherwise, one CTA of 512 per SM. The default for float32 LayerNorm
// rows of 1025-2047, 2049-4095 and 8193-16383 columns since session 19 (norm_launch.cu's LaunchNormalize has the
// timings); JK_NORM_TIER="block2 8 B" forces it. A kernel of its own: __launch_bounds__(512, 1) already compiled the
// default instantiations differently from __launch_bounds__(512) (96 registers instead of 85).
template <typename T, Kind K, int P, int C>
__global__ void __launch_bounds__(kBlockMaxThreads, 2) BlockPerRowRegistersTwoPerSm(Params<T> p, int cluster) {
  BlockPerRowRegistersBody<T, K, P, C, false>(p, cluster);
}

// ---- tier 2b: persistent CTAs, rows staged in shared memory by the bulk copy engine (sm_90) -------
// The register tier keeps a row in flight per CTA and nothing in flight during its two block
// reductions; a bf16 LayerNorm row of 4 packs per thread took 103 registers (2 CTAs of 256 threads per
// SM), too few bytes in flight to cover DRAM latency (58-65% of the copy ceiling at 2048-8192 columns).
// Here each CTA owns `stages` row buffers in dynamic shared memory; one thread starts a 1-D bulk copy
// (cp.async.bulk, completing on an mbarrier) of each of the CTA's next rows, so while the CTA reduces and
// writes one row the next stages-1 rows are already on their way, whatever the register footprint.
// Threads read their packs from shared memory in every pass (three 16-byte reads per pack for LayerNorm:
// shared memory has bandwidth to spare, registers do not), and hold the scale/bias packs in registers
// across rows while the CTA stays within one parameter group.
// Needs n * sizeof(T) % 16 == 0 and 16-byte aligned x (the launcher's Vectorizable check).
constexpr int kBulkMaxStages = 8;
constexpr int kBulkMaxThreads = 512;

// C packs per thread at most (thread t takes packs t, t + blockDim.x, ...); grid <= rows.
template <typename T, Kind K, int P, int C>
__global__ void __launch_bounds__(kBulkMaxThreads) BlockPerRowBulkSmem(Params<T> p, int stages) {
  extern __shared__ __align__(128) unsigned char row_buffers[];  // stages rows of n elements
  __shared__ uint64_t full[kBulkMaxStages];
  __shared__ float scratch[32];
  const int64_t rows = p.outer, n = p.n, packs = n / P;
  const uint32_t row_bytes = static_cast<uint32_t>(n * sizeof(T));
  const float inv_n = 1.f / static_cast<float>(n);
  T* buffers = reinterpret_cast<T*>(row_buffers);
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) BarrierInit(&full[s]);
    BarrierInitFence();
    for (int s = 0; s < stages; ++s) {
      const int64_t row = blockIdx.x + static_cast<int64_t>(s) * gridDim.x;
      if (row < rows) BulkLoadRow(buffers + s * n, p.x + row * n, row_bytes, &full[s]);
    }
  }
  __syncthreads();  // the barriers are initialised before anyone waits on them

  Pack<T, P> g[C], b[C];
  const T* held_scale = nullptr;  // the parameter rows g/b hold (reloaded when a row changes group)
  const T* held_bias = nullptr;
  int stage = 0;
  uint32_t parity = 0;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    T* xs = buffers + stage * n;
#ifdef JK_HAS_BULK_COPY
    BarrierWait(&full[stage], parity);
#else
    // Only reached through PTX for an older target JIT-compiled on a newer GPU: no copy engine, so a
    // plain copy into the stage keeps the kernel correct.
    for (int64_t i = threadIdx.x; i < packs; i += blockDim.x) StorePack<T, P>(xs + i * P, LoadPack<T, P>(p.x + row * n + i * P));
    __syncthreads();
#endif
    const float shift = K == Kind::kLayerNorm ? ToFloat(xs[0]) : 0.f;  // see RowShift
    float sum = 0.f;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int64_t i = static_cast<int64_t>(c) * blockDim.x + threadIdx.x;
      if (i < packs) {
        const Pack<T, P> v = LoadPack<T, P>(xs + i * P);
#pragma unroll
        for (int e = 0; e < P; ++e) {
          const float f = ToFloat(v.v[e]);
          sum += K == Kind::kLayerNorm ? f - shift : f * f;
        }
      }
    }
    sum = BlockAllReduce(sum, SumOp(), scratch);
    float mean = 0.f, rstd;
    if constexpr (K == Kind::kLayerNorm) {
      const float shifted_mean = sum * inv_n;
      mean = shift + shifted_mean;
      float sq = 0.f;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t i = static_cast<int64_t>(c) * blockDim.x + threadIdx.x;
        if (i < packs) {
          const Pack<T, P> v = LoadPack<T, P>(xs + i * P);
#pragma unroll
          for (int e = 0; e < P; ++e) {
            const float d = (ToFloat(v.v[e]) - shift) - shifted_mean;
            sq += d * d;
          }
        }
      }
      rstd = RstdFrom(BlockAllReduce(sq, SumOp(), scratch) * inv_n, p.epsilon);
    } else {
      rstd = RstdFrom(sum * inv_n, p.epsilon);
    }
    const T* scale = ScaleRow(p, row);
    const T* bias = K == Kind::kLayerNorm ? BiasRow(p, row) : nullptr;
    if (scale != held_scale) {  // uniform across the CTA
      held_scale = scale;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t i = static_cast<int64_t>(c) * blockDim.x + threadIdx.x;
        if (i < packs) g[c] = LoadPack<T, P>(scale + i * P);
      }
    }
    if (bias != held_bias) {
      held_bias = bias;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t i = static_cast<int64_t>(c) * blockDim.x + threadIdx.x;
        if (i < packs) b[c] = LoadPack<T, P>(bias + i * P);
      }
    }
#pragma unroll
    for (int c = 0; c < C; ++c) {
      if (scale != nullptr) Opaque(g[c]);
      if (bias != nullptr) Opaque(b[c]);
    }
    T* y = p.y + row * n;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int64_t i = static_cast<int64_t>(c) * blockDim.x + threadIdx.x;
      if (i >= packs) continue;
      StorePack<T, P>(y + i * P, NormalizeWith<K, T, P>(LoadPack<T, P>(xs + i * P), mean, rstd, g[c], b[c],
                                                         scale != nullptr, bias != nullptr));
    }
    if (threadIdx.x == 0 && p.mean != nullptr) {
      p.mean[row] = mean;
      p.rstd[row] = rstd;
    }
    // Every thread is done reading this stage before the copy engine refills it.
    __syncthreads();
    const int64_t next = row + static_cast<int64_t>(stages) * gridDim.x;
    if (threadIdx.x == 0 && next < rows) BulkLoadRow(buffers + stage * n, p.x + next * n, row_bytes, &full[stage]);
    if (++stage == stages) {
      stage = 0;
      parity ^= 1;
    }
  }
}

}  // namespace jk::norm
