// SkinnyMma: bf16/f16 decode shapes (M <= 8) on tensor cores, split over N and K across a thread-block
// cluster.
//
// At M = 8 a SIMT GEMV is compute-bound on H200 (2*8*K*N FMAs at fp32 SIMT rate take longer than reading
// b from L2), so the products go through mma.sync m16n8k16 computing out^T = b^T a^T: the 16 mma rows are
// 16 columns of b, the 8 mma columns are the (up to) 8 rows of a, so nothing is padded at M = 8.
//
// Fragments come straight from 16-byte global loads of b, no shared memory: lane (g = lane / 4,
// t = lane % 4) loads rows kb + 4t .. kb + 4t + 3 of b at columns c + 8g .. c + 8g + 7 (a warp load
// instruction reads 4 whole 128-byte row segments). The mma's k order only has to agree between its two
// operands, so logical k pair 2t holds b rows 4t, 4t+1 and pair 2t+8 rows 4t+2, 4t+3; byte permutes pair
// up the two rows of each column. Logical rows g / g+8 of mma j are columns 8g + 2j / 8g + 2j + 1. The a
// operand for lane (g, t) is then a[g][kb + 4t .. kb + 4t + 3]: one 8-byte load.
//
// Work split: a CTA (8 warps) owns 64 columns; its warps and the CTAs of its cluster (kClusterMax at
// most, one per cluster rank) split K into contiguous slices. Each warp issues kSteps x 4 loads of 16 bytes
// before its first mma. Partials meet in shared memory (warps), then through distributed shared memory
// (cluster ranks, sm_90): deterministic, no scratch buffer, no atomics.
#pragma once
#include <cstdint>

#include "common/bulk_copy.cuh"  // ClusterSmemAddress, SmemAddress
#include "common/device.cuh"
#include "matmul/matmul_epilogue.cuh"

namespace jk::mm {

constexpr int kSkinnyMmaWarps = 8;
constexpr int kSkinnyMmaThreads = 32 * kSkinnyMmaWarps;
constexpr int kSkinnyMmaCols = 64;    // columns per CTA: 8 lanes groups x 8 columns
constexpr int kSkinnyMmaSteps = 4;    // 16-deep k steps a warp has in flight
constexpr int kSkinnyMmaClusterMax = 8;

// 16 bytes of global memory, or zeros where !pred: predicated, so a round of loads is straight-line code
// (branches around each load split it into blocks ptxas schedules one by one).
__device__ __forceinline__ uint4 LoadU4OrZero(const void* ptr, bool pred) {
  uint4 v;
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %5, 0;\n mov.b32 %0, 0;\n mov.b32 %1, 0;\n mov.b32 %2, 0;\n"
      " mov.b32 %3, 0;\n @p ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];\n}\n"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(ptr), "r"(static_cast<int>(pred)));
  return v;
}

template <typename T>
__device__ __forceinline__ void SkinnyMmaOp(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// One 16-deep k step of a lane: its 4 rows of b (8 columns each) and its 4 k of a row of a.
template <typename T>
__device__ __forceinline__ void SkinnyMmaStep(float (&acc)[4][4], const uint4 (&vb)[4], uint32_t a0, uint32_t a1) {
  const uint32_t* r0 = &vb[0].x;
  const uint32_t* r1 = &vb[1].x;
  const uint32_t* r2 = &vb[2].x;
  const uint32_t* r3 = &vb[3].x;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    // Word j of a row holds columns 2j (low half) and 2j + 1 (high half).
    const uint32_t fa[4] = {__byte_perm(r0[j], r1[j], 0x5410), __byte_perm(r0[j], r1[j], 0x7632),
                            __byte_perm(r2[j], r3[j], 0x5410), __byte_perm(r2[j], r3[j], 0x7632)};
    SkinnyMmaOp<T>(acc[j], fa, a0, a1);
  }
}

// Cluster rank r's copy of the shared-memory float at `p`, and (LoadClusterShared4If) of the 16-byte-aligned float4
// there (sm_90; the launchers use clusters only there).
__device__ __forceinline__ float LoadClusterShared(const float* p, uint32_t rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(ClusterSmemAddress(SmemAddress(p), rank)) : "memory");
  return v;
#else
  return *p;
#endif
}
// The float4 where `pred`, else zeros (predicated: no branch, so a thread's loads of several ranks issue back to back).
__device__ __forceinline__ float4 LoadClusterShared4If(const float* p, uint32_t rank, bool pred) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  float4 v;
  asm volatile(
      "{\n .reg .pred q;\n setp.ne.b32 q, %5, 0;\n mov.b32 %0, 0;\n mov.b32 %1, 0;\n mov.b32 %2, 0;\n mov.b32 %3, 0;\n"
      " @q ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n}\n"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "r"(ClusterSmemAddress(SmemAddress(p), rank)), "r"(static_cast<int>(pred))
      : "memory");
  return v;
#else
  return pred ? *reinterpret_cast<const float4*>(p) : make_float4(0.f, 0.f, 0.f, 0.f);
#endif
}

// The warps' partial sums (acc: each warp's out^T fragments) meet in shared memory (`part`, 8 x 8 x 64
// floats), then the cluster ranks' sums through distributed shared memory (`red`, 8 x 64 floats, read by
// the other ranks until the caller's closing cluster barrier); rank r stores its share of the block's
// outputs through the epilogue, in a fixed rank order (deterministic).
template <typename T>
__device__ __forceinline__ void SkinnyReduceStore(const float (&acc)[4][4], float* part, float* red,
                                                  const MatmulProblem& p, int64_t z, const BatchOffsets& o,
                                                  int cluster, int rank, int64_t col_block) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  float* mine = part + warp * 8 * kSkinnyMmaCols;
  // acc[j] = out^T rows (8g + 2j, 8g + 2j + 1) x columns (2t, 2t + 1), i.e. out[2t + i][c + 2j + h].
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    mine[(2 * t) * kSkinnyMmaCols + 8 * g + 2 * j] = acc[j][0];
    mine[(2 * t + 1) * kSkinnyMmaCols + 8 * g + 2 * j] = acc[j][1];
    mine[(2 * t) * kSkinnyMmaCols + 8 * g + 2 * j + 1] = acc[j][2];
    mine[(2 * t + 1) * kSkinnyMmaCols + 8 * g + 2 * j + 1] = acc[j][3];
  }
  __syncthreads();
  for (int e = threadIdx.x; e < 8 * kSkinnyMmaCols; e += kSkinnyMmaThreads) {
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < kSkinnyMmaWarps; ++w) s += part[w * 8 * kSkinnyMmaCols + e];
    red[e] = s;
  }
  if (cluster > 1) ClusterBarrier();  // every rank's red[] is complete
  else __syncthreads();
  const Epilogue<T> ep(p, z, o);
  const int share = 8 * kSkinnyMmaCols / cluster;
  for (int e = rank * share + threadIdx.x; e < (rank + 1) * share; e += kSkinnyMmaThreads) {
    float s = 0.f;
    if (cluster > 1) {
      for (int r = 0; r < cluster; ++r) s += LoadClusterShared(&red[e], static_cast<uint32_t>(r));
    } else {
      s = red[e];
    }
    ep.Store(e / kSkinnyMmaCols, col_block * kSkinnyMmaCols + e % kSkinnyMmaCols, s);
  }
}

// Grid: x = column blocks x cluster (cluster dims (cluster, 1, 1)), z = batch. k_slice: the k extent of
// one warp (a multiple of 16); cluster * kSkinnyMmaWarps * k_slice >= K.
template <typename T>
__global__ void __launch_bounds__(kSkinnyMmaThreads, 2)
    SkinnyMmaKernel(MatmulProblem p, int cluster, int64_t k_slice) {
  __shared__ float part[kSkinnyMmaWarps][8][kSkinnyMmaCols];
  __shared__ float red[8 * kSkinnyMmaCols];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int rank = static_cast<int>(blockIdx.x) % cluster;
  const int64_t col_block = blockIdx.x / cluster;
  const int64_t c = col_block * kSkinnyMmaCols + 8 * g;
  const bool live = c < p.n;  // n % 8 == 0: a lane's 8 columns are wholly inside or outside
  const int64_t kw0 = (static_cast<int64_t>(rank) * kSkinnyMmaWarps + warp) * k_slice;
  const int64_t kw1 = kw0 + k_slice < p.k ? kw0 + k_slice : p.k;
  for (int64_t z = blockIdx.z; z < p.batch_count; z += gridDim.z) {
    const BatchOffsets o = OffsetsOf(p, z);
    const uint16_t* a = static_cast<const uint16_t*>(p.a) + o.a;
    const uint16_t* b = static_cast<const uint16_t*>(p.b) + o.b;
    // Lane g reads row g of a: 8-byte vectors when every row start allows them.
    const bool a_vec = p.k % 4 == 0 && IsAligned(a, 8);
    const bool a_row = g < p.m;
    float acc[4][4] = {};
    for (int64_t k0 = kw0; k0 < kw1; k0 += 16 * kSkinnyMmaSteps) {
      uint4 vb[kSkinnyMmaSteps][4];
      uint32_t va[kSkinnyMmaSteps][2];
      const uint16_t* pb = b + (k0 + 4 * t) * p.n + c;
#pragma unroll
      for (int s = 0; s < kSkinnyMmaSteps; ++s) {
        const int64_t kk = k0 + 16 * s + 4 * t;
#pragma unroll
        for (int r = 0; r < 4; ++r) vb[s][r] = LoadU4OrZero(pb + (16 * s + r) * p.n, live && kk + r < kw1);
        va[s][0] = va[s][1] = 0;
        if (a_row && kk < kw1) {
          if (a_vec) {  // kw1 is a multiple of 4 here (k_slice % 16 == 0, K % 4 == 0)
            const uint2 v = __ldg(reinterpret_cast<const uint2*>(a + g * p.k + kk));
            va[s][0] = v.x;
            va[s][1] = v.y;
          } else {
            uint32_t e[4];
#pragma unroll
            for (int r = 0; r < 4; ++r) e[r] = kk + r < kw1 ? a[g * p.k + kk + r] : 0u;
            va[s][0] = e[0] | (e[1] << 16);
            va[s][1] = e[2] | (e[3] << 16);
          }
        }
      }
#pragma unroll
      for (int s = 0; s < kSkinnyMmaSteps; ++s) SkinnyMmaStep<T>(acc, vb[s], va[s][0], va[s][1]);
    }
    SkinnyReduceStore<T>(acc, &part[0][0][0], red, p, z, o, cluster, rank, col_block);
    // red[] and part[] are read (by other ranks too) before the next batch index overwrites them, and
    // stay alive until every rank has read them.
    if (cluster > 1) ClusterBarrier();
    else __syncthreads();
  }
}

}  // namespace jk::mm
