// LayerNorm / RMSNorm kernels. x is viewed as (outer, n, inner) around the normalised axis; the row
// kernels handle inner == 1 (rows = outer), the strided kernel inner > 1. Statistics are float32 for every
// storage type: LayerNorm uses two passes over a register-resident row (the mean, then the mean of squared
// deviations), or Welford/Chan merges where the row is streamed; never the naive sum of squares; always of
// the data shifted by the row's first element (RowShift).
// Device code only: the launcher (norm_launch.cu) picks the tier and its template parameters.
#pragma once
#include <cooperative_groups.h>

#include "common/bulk_copy.cuh"
#include "common/device.cuh"

namespace jk::norm {

enum class Kind { kLayerNorm, kRmsNorm };

// Everything a kernel needs, typed. scale/bias are (groups, n) row-major or null; row o uses scale row
// o / scale_rows_per_group (that is what keeps vmap over scale/bias a single call). mean/rstd are
// optional outputs (null: not written); in stats-only mode `mean` receives the mean (LayerNorm) or the
// mean of squares (RMSNorm) and `rstd` receives M2 = sum((x - mean)^2) (LayerNorm only).
template <typename T>
struct Params {
  const T* __restrict__ x;
  const T* __restrict__ scale;
  const T* __restrict__ bias;
  T* __restrict__ y;
  float* __restrict__ mean;
  float* __restrict__ rstd;
  int64_t outer, n, inner;
  int64_t scale_rows_per_group, bias_rows_per_group;
  float epsilon;
};

// ---- small helpers ------------------------------------------------------------------------------
template <typename T, int P>
__device__ __forceinline__ Pack<T, P> LoadPack(const T* p) {
  return *reinterpret_cast<const Pack<T, P>*>(p);
}
// Evict-first load, for the last read of data that no later kernel reads here (the two-read kernel's
// second pass). The single-read tiers use plain loads, as XLA does: at L2-resident sizes (x < 50 MB) jnp
// ran up to 2x faster than our first version, whose evict-first loads of x are one suspect (x leaves L2
// before the next call reads it).
template <typename T, int P>
__device__ __forceinline__ Pack<T, P> LoadPackStreaming(const T* p) {
  if constexpr (sizeof(Pack<T, P>) == 16) {
    int4 v = __ldcs(reinterpret_cast<const int4*>(p));
    return *reinterpret_cast<Pack<T, P>*>(&v);
  } else {
    return LoadPack<T, P>(p);
  }
}
template <typename T, int P>
__device__ __forceinline__ void StorePack(T* p, const Pack<T, P>& v) {
  *reinterpret_cast<Pack<T, P>*>(p) = v;
}

// LayerNorm statistics are taken of x - x[row, 0] ("shifted data"): a row whose mean is large against its
// spread (mean 1e4, std 0.1) would otherwise lose the mean to float32 rounding of the running sum (an error
// of about one ulp of the mean, which (x - mean) * rstd amplifies by mean / std). The subtraction is exact
// for values near the shift, so the shifted sum keeps full relative precision; the shift is added back
// once. RMSNorm needs no shift (0). `row` may be past the end (padding lanes): those get 0.
template <Kind K, typename T>
__device__ __forceinline__ float RowShift(const T* x, int64_t row, int64_t rows, int64_t n) {
  return K == Kind::kLayerNorm && row < rows ? ToFloat(x[row * n]) : 0.f;
}

// The normalisation of one element given the row statistics and the (optional) affine parameters.
template <Kind K, typename T>
__device__ __forceinline__ float Normalize(float v, float mean, float rstd, const T* scale, const T* bias,
                                           int64_t col) {
  float r = (K == Kind::kLayerNorm ? v - mean : v) * rstd;
  if (scale != nullptr) r *= ToFloat(scale[col]);
  if (K == Kind::kLayerNorm && bias != nullptr) r += ToFloat(bias[col]);
  return r;
}

// Affine rows of a given output row (null when absent). The common single-group case skips the 64-bit
// division (a few dozen instructions, paid per row: significant for short rows).
template <typename T>
__device__ __forceinline__ const T* GroupRow(const T* base, int64_t row, int64_t rows_per_group,
                                             const Params<T>& p) {
  if (base == nullptr || rows_per_group >= p.outer) return base;
  return base + (row / rows_per_group) * p.n;
}
template <typename T>
__device__ __forceinline__ const T* ScaleRow(const Params<T>& p, int64_t row) {
  return GroupRow(p.scale, row, p.scale_rows_per_group, p);
}
template <typename T>
__device__ __forceinline__ const T* BiasRow(const Params<T>& p, int64_t row) {
  return GroupRow(p.bias, row, p.bias_rows_per_group, p);
}

// A pack of outputs at column `col` (a multiple of P, so the parameter packs are aligned whenever x's
// are: the launcher checks). Loading scale/bias one pack at a time rather than one element at a time
// cuts the load instructions of LayerNorm's output pass by up to 2 * P per pack (with per-element loads,
// LayerNorm measured 10-40% below RMSNorm at the same shape; RMSNorm loads half as many parameters).
template <Kind K, typename T, int P>
__device__ __forceinline__ Pack<T, P> NormalizePack(const Pack<T, P>& v, float mean, float rstd,
                                                    const T* scale, const T* bias, int64_t col) {
  Pack<T, P> g, b, out;
  if (scale != nullptr) g = LoadPack<T, P>(scale + col);
  if (K == Kind::kLayerNorm && bias != nullptr) b = LoadPack<T, P>(bias + col);
#pragma unroll
  for (int e = 0; e < P; ++e) {
    float r = (K == Kind::kLayerNorm ? ToFloat(v.v[e]) - mean : ToFloat(v.v[e])) * rstd;
    if (scale != nullptr) r *= ToFloat(g.v[e]);
    if (K == Kind::kLayerNorm && bias != nullptr) r += ToFloat(b.v[e]);
    out.v[e] = FromFloat<T>(r);
  }
  return out;
}
// The same with parameter packs already loaded (the early-parameter and bulk-copy paths).
template <Kind K, typename T, int P>
__device__ __forceinline__ Pack<T, P> NormalizeWith(const Pack<T, P>& v, float mean, float rstd, const Pack<T, P>& g,
                                                    const Pack<T, P>& b, bool has_scale, bool has_bias) {
  Pack<T, P> out;
#pragma unroll
  for (int e = 0; e < P; ++e) {
    float r = (K == Kind::kLayerNorm ? ToFloat(v.v[e]) - mean : ToFloat(v.v[e])) * rstd;
    if (has_scale) r *= ToFloat(g.v[e]);
    if (K == Kind::kLayerNorm && has_bias) r += ToFloat(b.v[e]);
    out.v[e] = FromFloat<T>(r);
  }
  return out;
}

__device__ __forceinline__ float RstdFrom(float var, float eps) { return rsqrtf(var + eps); }

// ---- tier 1: a thread group of W lanes per row, the row in registers -----------------------------
// W in {1, 2, 4, ..., 32}; each lane holds C packs of P elements per row, so rows of up to W * C * P
// elements. Short rows (W < 32) take R = 2 rows per lane so tiny rows still keep two independent loads
// in flight per lane. Loop bounds are uniform per warp (the shuffles use the full mask): rows past the
// end are computed on zeros and never stored. The packs are kept in their storage type (the compiler
// may still keep them converted to float32: the launcher caps C for bf16/f16 accordingly).
// kEarlyParams (short rows, C * R <= 2): the scale/bias packs are loaded with x, before the reductions,
// instead of after them: a short row's time is a chain of dependent latencies (load, shuffles, parameter
// load, store), and this takes one memory round trip out of it for a few registers.
// The body is shared by two kernels (GroupPerRowRegisters and GroupPerRowRegistersEarlyParams below), so
// the default one compiles exactly as before the early variant existed.
template <typename T, Kind K, int P, int C, int W, int R, bool kEarlyParams>
__device__ __forceinline__ void GroupPerRowBody(const Params<T>& p) {
  static_assert(32 % W == 0, "a thread group is a power-of-two fraction of a warp");
  constexpr int kGroupsPerWarp = 32 / W;
  const int lane = threadIdx.x % W;
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int64_t num_warps = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
  const int group_in_warp = (threadIdx.x % 32) / W;
  const int64_t rows = p.outer, n = p.n;
  const float inv_n = 1.f / static_cast<float>(n);

  for (int64_t base = warp * kGroupsPerWarp * R; base < rows; base += num_warps * kGroupsPerWarp * R) {
    Pack<T, P> v[R][C];
    Pack<T, P> g[kEarlyParams ? R : 1][kEarlyParams ? C : 1], b[kEarlyParams ? R : 1][kEarlyParams ? C : 1];
    float sum[R], shift[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t row = base + static_cast<int64_t>(group_in_warp) * R + r;
      shift[r] = RowShift<K>(p.x, row, rows, n);
      sum[r] = 0.f;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t col = (static_cast<int64_t>(c) * W + lane) * P;
        if (row < rows && col < n) {
          v[r][c] = LoadPack<T, P>(p.x + row * n + col);
          if constexpr (kEarlyParams) {
            const T* scale = ScaleRow(p, row);
            const T* bias = BiasRow(p, row);
            if (scale != nullptr) g[r][c] = LoadPack<T, P>(scale + col);
            if (K == Kind::kLayerNorm && bias != nullptr) b[r][c] = LoadPack<T, P>(bias + col);
          }
        } else {
          // Padding holds the shift (exactly representable: an element of x, or 0), so it adds nothing
          // to the sum below. That sum must stay outside the load branch: summing inside it made each
          // load wait for the one before (SASS; 16-bit LayerNorm lost ~30% of its bandwidth).
#pragma unroll
          for (int e = 0; e < P; ++e) v[r][c].v[e] = FromFloat<T>(shift[r]);
        }
#pragma unroll
        for (int e = 0; e < P; ++e) {
          const float f = ToFloat(v[r][c].v[e]);
          sum[r] += K == Kind::kLayerNorm ? f - shift[r] : f * f;
        }
      }
    }
    float mean[R], rstd[R];
#pragma unroll
    for (int r = 0; r < R; ++r) sum[r] = WarpAllReduce<W>(sum[r], SumOp());
    if constexpr (K == Kind::kLayerNorm) {
      float sq[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float shifted_mean = sum[r] * inv_n;
        mean[r] = shift[r] + shifted_mean;
        sq[r] = 0.f;
        const int64_t row = base + static_cast<int64_t>(group_in_warp) * R + r;
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const int64_t col = (static_cast<int64_t>(c) * W + lane) * P;
          if (row < rows && col < n) {  // padding must not contribute (0 - mean)^2
#pragma unroll
            for (int e = 0; e < P; ++e) {
              const float d = (ToFloat(v[r][c].v[e]) - shift[r]) - shifted_mean;
              sq[r] += d * d;
            }
          }
        }
      }
#pragma unroll
      for (int r = 0; r < R; ++r) rstd[r] = RstdFrom(WarpAllReduce<W>(sq[r], SumOp()) * inv_n, p.epsilon);
    } else {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        mean[r] = 0.f;
        rstd[r] = RstdFrom(sum[r] * inv_n, p.epsilon);
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t row = base + static_cast<int64_t>(group_in_warp) * R + r;
      if (row >= rows) continue;
      const T* scale = ScaleRow(p, row);
      const T* bias = BiasRow(p, row);
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int64_t col = (static_cast<int64_t>(c) * W + lane) * P;
        if (col >= n) continue;
        if constexpr (kEarlyParams) {
          if (scale != nullptr) Opaque(g[r][c]);
          if (bias != nullptr) Opaque(b[r][c]);
          StorePack<T, P>(p.y + row * n + col, NormalizeWith<K, T, P>(v[r][c], mean[r], rstd[r], g[r][c], b[r][c],
                                                                      scale != nullptr, bias != nullptr));
        } else {
          StorePack<T, P>(p.y + row * n + col, NormalizePack<K, T, P>(v[r][c], mean[r], rstd[r], scale, bias, col));
        }
      }
      if (lane == 0 && p.mean != nullptr) {
        p.mean[row] = mean[r];
        p.rstd[row] = rstd[r];
      }
    }
  }
}

template <typename T, Kind K, int P, int C, int W, int R>
__global__ void __launch_bounds__(128) GroupPerRowRegisters(Params<T> p) {
  GroupPerRowBody<T, K, P, C, W, R, false>(p);
}
// The early loads may not cost occupancy: 49152 short rows are one wave of 768 CTAs only at >= 6 CTAs
// per SM (bf16 LayerNorm took 88 registers uncapped: 5 CTAs), hence the cap of 64 (8 CTAs).
template <typename T, Kind K, int P, int C, int W, int R>
__global__ void __launch_bounds__(128, 8) GroupPerRowRegistersEarlyParams(Params<T> p) {
  GroupPerRowBody<T, K, P, C, W, R, true>(p);
}

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

// ---- tier 3: a block per row reading x twice (any length, any alignment) --------------------------
// Pass 1 loads kTwoReadsUnroll packs per thread at once (more bytes in flight per thread), reduces them
// exactly in registers (two passes over at most U * P values) and merges that chunk into the thread's
// Welford state (one division per chunk); pass 2 re-reads the row, which the first pass just brought
// into L2, with an evict-first load (its last use) and writes y with streaming stores, so y does not push
// other rows' x out of L2 before their second read. With stats_only the kernel writes (mean, M2) for
// LayerNorm or the mean of squares for RMSNorm instead of y (the sharded-axis entry points).
// Packs per thread per step, and the CTAs per SM the register budget must allow: 4 float32 packs (64
// bytes in flight per thread) at 2 CTAs of 512 threads; one bf16/f16 pack at 3 CTAs (4 half packs, 32
// values, took 119 registers: one CTA per SM).
template <typename T>
constexpr int kTwoReadsUnroll = sizeof(T) == 4 ? 4 : 1;
template <typename T>
constexpr int kTwoReadsMinBlocks = sizeof(T) == 4 ? 2 : 3;
constexpr int kTwoReadsMaxThreads = 512;

template <typename T, int P>
__device__ __forceinline__ void StorePackStreaming(T* p, const Pack<T, P>& v) {
  if constexpr (sizeof(Pack<T, P>) == 16) {
    __stcs(reinterpret_cast<int4*>(p), *reinterpret_cast<const int4*>(&v));
  } else {
    StorePack<T, P>(p, v);
  }
}

// Welford state of the first `valid` of U register packs, shifted by `shift`, given their shifted sum `s`:
// the mean first, then the squared deviations from it (two exact passes over registers), ready to merge.
template <typename T, int P, int U>
__device__ __forceinline__ Welford PacksWelford(const Pack<T, P> (&v)[U], int valid, float shift, float s) {
  Welford cw;
  cw.count = static_cast<float>(valid * P);
  cw.mean = s / cw.count;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (u < valid) {
#pragma unroll
      for (int e = 0; e < P; ++e) {
        const float d = (ToFloat(v[u].v[e]) - shift) - cw.mean;
        cw.m2 += d * d;
      }
    }
  }
  return cw;
}

template <typename T, Kind K, int P>
__global__ void __launch_bounds__(kTwoReadsMaxThreads, kTwoReadsMinBlocks<T>) BlockPerRowTwoReads(Params<T> p, bool stats_only) {
  constexpr int U = kTwoReadsUnroll<T>;
  __shared__ float scratch[3 * 32];
  const int64_t rows = p.outer, n = p.n;
  const int64_t packs = n / P;  // the launcher guarantees n % P == 0
  const int64_t step = blockDim.x;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x = p.x + row * n;
    const float shift = RowShift<K>(p.x, row, rows, n);
    Welford w;  // of x - shift (LayerNorm)
    for (int64_t base = threadIdx.x; base < packs; base += U * step) {
      Pack<T, P> v[U];
      int valid = 0;  // packs base, base + step, ... that exist: a prefix of v, at least one
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (base + u * step < packs) {
          v[u] = LoadPack<T, P>(x + (base + u * step) * P);
          ++valid;
        }
      }
      float s = 0.f;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (u < valid) {
#pragma unroll
          for (int e = 0; e < P; ++e) s += ToFloat(v[u].v[e]) - shift;
        }
      }
      w.Merge(PacksWelford(v, valid, shift, s));
    }
    // The butterfly for LayerNorm, the serial merge for RMSNorm: measured on an H200 (session 11 benchmark,
    // two runs, % of copy) LayerNorm float32 16384 95.6 -> 98.1, RMSNorm float32 32768 81.3 -> 75.3-75.6 with
    // the butterfly (not analysed: the reduction is shorter, the second read's L2 hits may not be).
    w = BlockAllReduceWelford<K == Kind::kLayerNorm>(w, scratch);
    const float var = w.m2 / static_cast<float>(n);
    // mean(x^2) = var + mean^2: two non-negative terms, no cancellation.
    const float ms = var + w.mean * w.mean;  // RMSNorm: shift == 0
    const float mean = K == Kind::kLayerNorm ? shift + w.mean : 0.f;
    const float rstd = RstdFrom(K == Kind::kLayerNorm ? var : ms, p.epsilon);
    if (stats_only) {
      if (threadIdx.x == 0) {
        p.mean[row] = K == Kind::kLayerNorm ? mean : ms;
        if (K == Kind::kLayerNorm) p.rstd[row] = w.m2;
      }
      __syncthreads();  // scratch is reused by the next row's reduction
      continue;
    }
    const T* scale = ScaleRow(p, row);
    const T* bias = BiasRow(p, row);
    T* y = p.y + row * n;
    for (int64_t base = threadIdx.x; base < packs; base += U * step) {
      Pack<T, P> v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (base + u * step < packs) v[u] = LoadPackStreaming<T, P>(x + (base + u * step) * P);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t i = base + u * step;
        if (i < packs) StorePackStreaming<T, P>(y + i * P, NormalizePack<K, T, P>(v[u], mean, rstd, scale, bias, i * P));
      }
    }
    if (threadIdx.x == 0 && p.mean != nullptr) {
      p.mean[row] = mean;
      p.rstd[row] = rstd;
    }
    __syncthreads();
  }
}

// ---- tier 4: normalising a non-last axis (inner > 1) ----------------------------------------------
// Columns are the outer * inner (o, i) pairs, flattened so that a warp's 32 lanes take 32 consecutive
// columns: consecutive addresses within an outer index, whole 32-byte sectors across outer indices even
// when inner is small (measured: one outer index per block left half the lanes idle at inner = 16). The
// blockDim.y slices split the n strided elements of each column (the launcher uses up to 32 slices, so
// short grids of long columns still fill the GPU); each thread merges chunks of 8 elements (exact
// two-pass in registers, one division per chunk), the slices merge through shared memory, and x is read
// again to write y.
constexpr int kStridedMaxSlices = 32;

template <typename T, Kind K>
__global__ void __launch_bounds__(32 * kStridedMaxSlices) StridedTwoReads(Params<T> p, bool stats_only) {
  __shared__ float sm[3][kStridedMaxSlices][33];
  const int64_t n = p.n, inner = p.inner, columns = p.outer * p.inner;
  const int64_t tiles = (columns + 31) / 32;
  const int tx = threadIdx.x, ty = threadIdx.y, slices = blockDim.y;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t c = t * 32 + tx;
    const bool live = c < columns;
    const int64_t o = live ? c / inner : 0, i = live ? c % inner : 0;
    const T* x = p.x + o * n * inner + i;
    const float shift = K == Kind::kLayerNorm && live ? ToFloat(x[0]) : 0.f;  // see RowShift
    Welford w;  // of x - shift
    for (int64_t j0 = static_cast<int64_t>(ty) * 8; j0 < n; j0 += 8 * slices) {
      float v[8];
      int cnt = 0;
      float s = 0.f;
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const bool ok = live && j0 + e < n;
        v[e] = ok ? ToFloat(x[(j0 + e) * inner]) - shift : 0.f;
        s += v[e];
        cnt += ok;
      }
      if (cnt == 0) continue;
      Welford cw;
      cw.count = static_cast<float>(cnt);
      cw.mean = s / cw.count;
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const float d = v[e] - cw.mean;
        cw.m2 += e < cnt ? d * d : 0.f;
      }
      w.Merge(cw);
    }
    sm[0][ty][tx] = w.count;
    sm[1][ty][tx] = w.mean;
    sm[2][ty][tx] = w.m2;
    __syncthreads();
    Welford r;
    for (int s = 0; s < slices; ++s) {
      Welford o2;
      o2.count = sm[0][s][tx];
      o2.mean = sm[1][s][tx];
      o2.m2 = sm[2][s][tx];
      r.Merge(o2);
    }
    __syncthreads();  // sm is rewritten by the next tile
    const float var = r.m2 / static_cast<float>(n);
    const float ms = var + r.mean * r.mean;  // RMSNorm: shift == 0
    const float mean = K == Kind::kLayerNorm ? shift + r.mean : 0.f;
    const float rstd = RstdFrom(K == Kind::kLayerNorm ? var : ms, p.epsilon);
    if (stats_only) {
      if (live && ty == 0) {
        p.mean[c] = K == Kind::kLayerNorm ? mean : ms;
        if (K == Kind::kLayerNorm) p.rstd[c] = r.m2;
      }
      continue;
    }
    if (!live) continue;
    if (ty == 0 && p.mean != nullptr) {
      p.mean[c] = mean;
      p.rstd[c] = rstd;
    }
    const T* scale = ScaleRow(p, o);
    const T* bias = BiasRow(p, o);
    T* y = p.y + o * n * inner + i;
    for (int64_t j = ty; j < n; j += slices) {
      y[j * inner] = FromFloat<T>(Normalize<K>(ToFloat(x[j * inner]), mean, rstd, scale, bias, j));
    }
  }
}

// ---- apply given statistics (the sharded-axis entry point) ----------------------------------------
// Elementwise: y = (x - mean) * rstd * scale + bias with per-(outer, inner) mean/rstd. mean is null for
// RMSNorm.
template <typename T, Kind K>
__global__ void __launch_bounds__(256) ApplyStats(Params<T> p) {
  const int64_t total = p.outer * p.n * p.inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t i = e % p.inner, j = (e / p.inner) % p.n, o = e / (p.inner * p.n);
    const int64_t stat = o * p.inner + i;
    const float mean = K == Kind::kLayerNorm ? p.mean[stat] : 0.f;
    p.y[e] = FromFloat<T>(Normalize<K>(ToFloat(p.x[e]), mean, p.rstd[stat], ScaleRow(p, o), BiasRow(p, o), j));
  }
}

}  // namespace jk::norm
