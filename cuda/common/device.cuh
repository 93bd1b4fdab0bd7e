// Device-side building blocks shared by the kernels: type conversion, 16-byte packs, warp and block
// reductions and Welford statistics. Device code only.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace jk {

// ---- conversion to and from the float32 compute type ------------------------------------------
__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__half v) { return __half2float(v); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T FromFloat(float v);
template <>
__device__ __forceinline__ float FromFloat<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half FromFloat<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

__device__ __forceinline__ float BitsToFloat(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// Two 16-bit values of one 32-bit word (element 2k in the low half) as float32, in plain C++: bfloat16 by a
// shift and a mask (a bfloat16 is the top half of a float32; __bfloat162float's high half took a PRMT and a
// shift), float16 by one paired conversion.
template <typename T>
__device__ __forceinline__ float2 Unpack2(uint32_t u) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return make_float2(BitsToFloat(u << 16), BitsToFloat(u & 0xffff0000u));
  } else {
    __half2 h;
    memcpy(&h, &u, 4);
    return __half22float2(h);
  }
}

// ---- vector packs ------------------------------------------------------------------------------
// N elements of T moved as one aligned access (16 bytes when sizeof(T) * N == 16).
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// Elements per 16-byte access.
template <typename T>
constexpr int kVec16 = 16 / static_cast<int>(sizeof(T));

// The plain type that moves kBytes in one access (uint4 for 16 bytes).
template <int kBytes>
struct RawVec;
template <>
struct RawVec<16> {
  using type = uint4;
};
template <>
struct RawVec<8> {
  using type = uint2;
};
template <>
struct RawVec<4> {
  using type = uint32_t;
};
template <>
struct RawVec<2> {
  using type = uint16_t;
};

// Hides a pack's value from the optimiser (no instruction), so its float32 conversion cannot be moved
// before this point: packs held in registers (a row or column tile, or scale/bias packs loaded early or
// held across rows) would otherwise live as float32 copies, two registers per bf16 pair (the norm bulk
// tier's bf16 LayerNorm with 4 packs per thread took 106 registers instead of 52; the lane-group tier
// spilled), and each pass converts the held packs again instead.
template <typename T, int P>
__device__ __forceinline__ void Opaque(Pack<T, P>& v) {
  static_assert(sizeof(Pack<T, P>) == 16, "16-byte packs");
  uint4 u;
  memcpy(&u, &v, 16);
  asm volatile("" : "+r"(u.x), "+r"(u.y), "+r"(u.z), "+r"(u.w));
  memcpy(&v, &u, 16);
}

// Approximate reciprocal (MUFU). The callers pass arguments >= 1 (softmax row sums, gelu's 1 + z / 2,
// 1 + exp(-|s|)), where the ftz form flushes only results below 2^-126.
__device__ __forceinline__ float RcpApprox(float v) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}

__host__ __device__ __forceinline__ bool IsAligned(const void* p, int bytes) {
  return (reinterpret_cast<uintptr_t>(p) % bytes) == 0;
}

// Barrier over `count` threads on hardware barrier `id` (0 is __syncthreads'): the matmul epilogues' warpgroups, the
// norms' row-pairs halves.
__device__ __forceinline__ void NamedBarrier(uint32_t id, uint32_t count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void NamedArrive(uint32_t id, uint32_t count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// ---- reductions ---------------------------------------------------------------------------------
struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// All-reduce across groups of `Width` lanes (Width a power of two <= 32); every lane gets the result.
template <int Width, typename Op>
__device__ __forceinline__ float WarpAllReduce(float v, Op op) {
#pragma unroll
  for (int m = Width / 2; m > 0; m /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, m, Width));
  return v;
}

// All-reduce across the block; `scratch` holds at least 32 floats. Every thread gets the result.
template <typename Op>
__device__ __forceinline__ float BlockAllReduce(float v, Op op, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  v = WarpAllReduce<32>(v, op);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < warps; ++w) v = op(v, scratch[w]);
  return v;
}

// ---- Welford statistics ------------------------------------------------------------------------
// Running (count, mean, M2). Merging uses Chan et al.'s parallel update, which stays accurate where the
// naive sum of squares cancels catastrophically (large mean, small variance).
struct Welford {
  float count = 0.f, mean = 0.f, m2 = 0.f;

  __device__ __forceinline__ void Push(float x) {
    count += 1.f;
    float d = x - mean;
    mean += d / count;
    m2 += d * (x - mean);
  }
  // kFast: the weight o.count / n by the special-function unit's reciprocal (__fdividef: 2 ulp, two
  // instructions) instead of an IEEE division (a reciprocal, its refinement, a range check and a branch to a
  // slow path): the merges of a row's states sit on its critical path, one per butterfly level.
  template <bool kFast = false>
  __device__ __forceinline__ void Merge(const Welford& o) {
    if (o.count == 0.f) return;
    float n = count + o.count;
    float d = o.mean - mean;
    float w = kFast ? __fdividef(o.count, n) : o.count / n;
    mean += d * w;
    m2 += o.m2 + d * d * count * w;
    count = n;
  }
};

template <int Width, bool kFast = false>
__device__ __forceinline__ Welford WarpAllReduceWelford(Welford w) {
#pragma unroll
  for (int m = Width / 2; m > 0; m /= 2) {
    Welford o;
    o.count = __shfl_xor_sync(0xffffffffu, w.count, m, Width);
    o.mean = __shfl_xor_sync(0xffffffffu, w.mean, m, Width);
    o.m2 = __shfl_xor_sync(0xffffffffu, w.m2, m, Width);
    w.Merge<kFast>(o);
  }
  return w;
}

// The all-reduce over a group of `warps` whole warps that synchronise with `sync` (`thread`: the index in the
// group): the CTA (BlockAllReduceWelford below) or a named-barrier part of it (norm_cluster_pairs.cuh's halves).
// `scratch` holds at least 3 * 32 floats. kTree: the warps' states merged by a butterfly (below); false: one
// thread's serial merge of them in warp order, the form before session 11, kept where it measured faster
// (norm_kernels.cuh's two-read kernel for RMSNorm).
template <bool kTree = true, bool kFast = false, typename Sync>
__device__ __forceinline__ Welford GroupAllReduceWelford(Welford w, float* scratch, unsigned thread, unsigned group_warps,
                                                         Sync sync) {
  const int lane = thread & 31, warp = thread >> 5, warps = group_warps;
  w = WarpAllReduceWelford<32, kFast>(w);
  sync();  // scratch may still be read by a previous call
  if (lane == 0) {
    scratch[warp] = w.count;
    scratch[32 + warp] = w.mean;
    scratch[64 + warp] = w.m2;
  }
  sync();
  if constexpr (!kTree) {
    Welford r;
    for (int i = 0; i < warps; ++i) {
      Welford o;
      o.count = scratch[i];
      o.mean = scratch[32 + i];
      o.m2 = scratch[64 + i];
      r.Merge<kFast>(o);
    }
    return r;
  }
  // The warps' states merged by a butterfly in every warp: log2(warps) dependent merges (each with a division)
  // instead of warps - 1, over the lanes below the next power of two of warps only (the lanes above it never
  // meet the others), and a merge is not bit-symmetric in its operands: every thread takes lane 0's state,
  // which every warp computes from the same values in the same order.
  Welford r;
  if (lane < warps) {
    r.count = scratch[lane];
    r.mean = scratch[32 + lane];
    r.m2 = scratch[64 + lane];
  }
#pragma unroll
  for (int k = 16; k > 0; k /= 2) {
    if (k >= warps) continue;  // warp-uniform
    Welford o;
    o.count = __shfl_xor_sync(0xffffffffu, r.count, k);
    o.mean = __shfl_xor_sync(0xffffffffu, r.mean, k);
    o.m2 = __shfl_xor_sync(0xffffffffu, r.m2, k);
    r.Merge<kFast>(o);
  }
  r.count = __shfl_sync(0xffffffffu, r.count, 0);
  r.mean = __shfl_sync(0xffffffffu, r.mean, 0);
  r.m2 = __shfl_sync(0xffffffffu, r.m2, 0);
  return r;
}
template <bool kTree = true, bool kFast = false>
__device__ __forceinline__ Welford BlockAllReduceWelford(Welford w, float* scratch) {
  return GroupAllReduceWelford<kTree, kFast>(w, scratch, threadIdx.x, (blockDim.x + 31) >> 5, [] { __syncthreads(); });
}

// A whole-cluster barrier in its two halves, release/acquire: the shared-memory writes of every CTA before its
// arrival are visible to every CTA of the cluster after its wait. Apart, the wait can come later than the
// arrival: a CTA that has finished reading the others' shared memory arrives, does other work, and waits before
// its own shared memory is rewritten or released (the CTA exits). Clusters exist from sm_90 on; the launchers
// never ask for one below, so the sm_80 pass traps rather than skip the barrier.
__device__ __forceinline__ void ClusterArrive() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
#elif defined(__CUDA_ARCH__)
  __trap();
#endif
}
__device__ __forceinline__ void ClusterWait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#elif defined(__CUDA_ARCH__)
  __trap();
#endif
}
__device__ __forceinline__ void ClusterBarrier() {
  ClusterArrive();
  ClusterWait();
}
// ClusterArrive's lighter forms (PTX 8.6 fences restricted to shared memory; before CUDA 12.8 both are
// ClusterArrive). ClusterArrive's release is a MEMBAR.ALL.GPU: the thread first waits until every earlier memory
// operation of its own, global stores included, is performed GPU-wide.
//   - ClusterArriveAfterSharedWrites releases only the CTA's own shared-memory writes (fence.release restricted
//     to shared::cta, cluster scope: MEMBAR.ALL.CTA), which is all a CTA publishes when its peers read its shared
//     memory after their wait.
//   - ClusterArriveAfterPeerReads orders the thread's reads of its peers' shared memory before the arrival (fence
//     .acquire restricted to shared::cluster: a wait for the loads' results, no membar), for the closing barrier
//     after which a peer may rewrite or release (exit) the memory read.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 8))
#define JK_HAS_SHARED_FENCES 1
#endif
__device__ __forceinline__ void ClusterArriveAfterSharedWrites() {
#ifdef JK_HAS_SHARED_FENCES
  asm volatile(
      "fence.release.sync_restrict::shared::cta.cluster;\n"
      "barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
#else
  ClusterArrive();
#endif
}
__device__ __forceinline__ void ClusterArriveAfterPeerReads() {
#ifdef JK_HAS_SHARED_FENCES
  asm volatile(
      "fence.acquire.sync_restrict::shared::cluster.cluster;\n"
      "barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
#else
  ClusterArrive();
#endif
}

}  // namespace jk

// Bounds assertions, compiled in only with -DJK_DEBUG_BOUNDS=ON (used by the compute-sanitizer run). Not
// `assert`: release builds define NDEBUG, which would compile it out again.
#ifdef JK_DEBUG_BOUNDS
#include <cstdio>
#define JK_DEVICE_ASSERT(cond)                                                              \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      printf("jax-kernels: bounds check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      __trap();                                                                             \
    }                                                                                       \
  } while (0)
#else
#define JK_DEVICE_ASSERT(cond) ((void)0)
#endif
