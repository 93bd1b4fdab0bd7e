// SkinnyStream: the SkinnyMma decode tier (matmul_skinny_mma.cuh: same fragment mapping, same warp and
// cluster split of K, same reduction) with b and a streamed through a per-thread cp.async ring in shared
// memory instead of one round of register loads.
//
// Why: SkinnyMma issues one round of 16 register loads per warp and then waits, so a CTA's bytes are in
// flight only at its start, and K must be cut into many short slices (512 CTAs, two waves, each ending in
// a cluster reduction) to keep the memory system busy. Here every thread keeps STAGES - 1 16-deep k steps
// (4 x 16 bytes of b, 8 bytes of a) in flight at all times while it runs the mma of the oldest, so a CTA
// can stream a long k slice: the launcher sizes the grid for one wave of CTAs.
//
// Measured (H200, bench/lab/matmul_s3_h200.md): slower than SkinnyMma except at 8x4096x4096 with
// clusters of 2 (17.9 against 19.4 us), and much slower on DRAM-sized b (60.8 against 44.2 us at K =
// 14336): more bytes in flight is not what limits these kernels. Off by default (JK_MATMUL_SKINNY=stream).
//
// Each thread reads back only the bytes its own cp.async wrote (ring slot [stage][row][thread]), so
// cp.async.wait_group alone orders them: no barrier inside the k loop. A warp's 16-byte copies of one row
// are 512 contiguous bytes of shared memory (conflict-free).
#pragma once
#include <cstdint>

#include "matmul/matmul_skinny_mma.cuh"

namespace jk::mm {

// Shared memory of one CTA: the b ring (STAGES x 4 rows x threads x 16 bytes), then the a ring (STAGES x
// threads x 8 bytes). After the k loop the b ring holds the warps' partial sums (8 x 8 x 64 floats).
template <int STAGES>
struct SkinnyStreamSmem {
  static constexpr int kB = STAGES * 4 * kSkinnyMmaThreads * 16;
  static constexpr int kBytes = kB + STAGES * kSkinnyMmaThreads * 8;
  static_assert(kB >= kSkinnyMmaWarps * 8 * kSkinnyMmaCols * 4, "the partial sums fit the b ring");
};

// Copies `bytes` (16 or 8) from global to shared memory, or zeros where !pred (nothing is read then).
template <int kBytes>
__device__ __forceinline__ void CpAsyncOrZero(uint32_t dst, const void* src, bool pred) {
  if constexpr (kBytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(pred ? 16 : 0)
                 : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(pred ? 8 : 0)
                 : "memory");
  }
}
// With "memory" clobbers (unlike matmul_mma.cuh's, whose readers are volatile asm): the ring is read back
// with plain loads, which must stay after the wait.
__device__ __forceinline__ void RingCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void RingWait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// Grid and k_slice as SkinnyMmaKernel. Requires K % 4 == 0 and a 8-byte aligned (8-byte copies of a row
// of a; the launcher checks), n % 8 == 0 and b 16-byte aligned (as SkinnyMma).
template <typename T, int STAGES>
__global__ void __launch_bounds__(kSkinnyMmaThreads, 2)
    SkinnyStreamKernel(MatmulProblem p, int cluster, int64_t k_slice) {
  extern __shared__ __align__(16) unsigned char skinny_smem[];
  __shared__ float red[8 * kSkinnyMmaCols];
  using C = SkinnyStreamSmem<STAGES>;
  const uint32_t ring_b = static_cast<uint32_t>(__cvta_generic_to_shared(skinny_smem)) + threadIdx.x * 16;
  const uint32_t ring_a = static_cast<uint32_t>(__cvta_generic_to_shared(skinny_smem)) + C::kB + threadIdx.x * 8;
  const uint4* my_b = reinterpret_cast<const uint4*>(skinny_smem) + threadIdx.x;
  const uint2* my_a = reinterpret_cast<const uint2*>(skinny_smem + C::kB) + threadIdx.x;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int rank = static_cast<int>(blockIdx.x) % cluster;
  const int64_t col_block = blockIdx.x / cluster;
  const int64_t c = col_block * kSkinnyMmaCols + 8 * g;
  const bool live = c < p.n;  // n % 8 == 0: a lane's 8 columns are wholly inside or outside
  const int64_t kw0 = (static_cast<int64_t>(rank) * kSkinnyMmaWarps + warp) * k_slice;
  const int64_t kw1 = kw0 + k_slice < p.k ? kw0 + k_slice : p.k;
  const int steps = kw1 > kw0 ? static_cast<int>((kw1 - kw0 + 15) / 16) : 0;
  for (int64_t z = blockIdx.z; z < p.batch_count; z += gridDim.z) {
    const BatchOffsets o = OffsetsOf(p, z);
    const uint16_t* a = static_cast<const uint16_t*>(p.a) + o.a + (g < p.m ? g : 0) * p.k;
    const uint16_t* b = static_cast<const uint16_t*>(p.b) + o.b + c;
    const bool a_row = g < p.m;
    // Step i's copies into ring slot `slot`; kw1 % 4 == 0 (k_slice % 16 == 0, K % 4 == 0), so a's 4 k
    // are wholly inside or outside.
    auto issue = [&](int i, int slot) {
      const int64_t kk = kw0 + 16 * i + 4 * t;
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const bool in = live && kk + r < kw1;
        CpAsyncOrZero<16>(ring_b + (slot * 4 + r) * (kSkinnyMmaThreads * 16), in ? b + (kk + r) * p.n : b, in);
      }
      const bool in = a_row && kk < kw1;
      CpAsyncOrZero<8>(ring_a + slot * (kSkinnyMmaThreads * 8), in ? a + kk : a, in);
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < steps) issue(s, s);
      RingCommit();  // empty groups keep the count of groups per step fixed
    }
    float acc[4][4] = {};
    int slot = 0;
#pragma unroll 1
    for (int i = 0; i < steps; ++i) {
      // The slot refilled now was read (into registers) one iteration ago by this same thread.
      const int refill = slot == 0 ? STAGES - 1 : slot - 1;
      if (i + STAGES - 1 < steps) issue(i + STAGES - 1, refill);
      RingCommit();
      RingWait<STAGES - 1>();  // step i's group has landed
      uint4 vb[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) vb[r] = my_b[(slot * 4 + r) * kSkinnyMmaThreads];
      const uint2 va = my_a[slot * kSkinnyMmaThreads];
      SkinnyMmaStep<T>(acc, vb, va.x, va.y);
      slot = slot + 1 == STAGES ? 0 : slot + 1;
    }
    RingWait<0>();  // no copy may land in the ring once it holds the partial sums
    __syncthreads();   // every warp has read its ring
    SkinnyReduceStore<T>(acc, reinterpret_cast<float*>(skinny_smem), red, p, z, o, cluster, rank, col_block);
    // The partial sums and red[] are read (by other ranks too) before the next batch index overwrites them.
    if (cluster > 1) ClusterBarrier();
    else __syncthreads();
  }
}

}  // namespace jk::mm
