// SIMT (CUDA-core) matmul kernels: exact float32 accumulation for every dtype.
//   SimtTiled            any shape, any alignment: the reference tier every other tier falls back to.
//   SimtRegisterBlocked  float32, K % 4 == 0, N % 4 == 0, 16-byte aligned: register-blocked outer
//                        products from double-buffered shared memory (the classic SGEMM lineage).
//   SkinnyM              M <= 8: each thread streams 8 columns of b with 16-byte loads; the block splits
//                        K across its threads and reduces with shuffles + shared memory.
// Grids: x = N tiles, y = M tiles, z = batch; y and z are capped at 65535 and the kernels loop over the
// rest, so any M and any batch count work.
#pragma once
#include "common/device.cuh"
#include "matmul/matmul_epilogue.cuh"

namespace jk::mm {

constexpr int kSimtThreads = 256;

// ---- SimtTiled: 64x64x16 tiles, 16x16 threads, 4x4 outputs each (strided by 16: conflict-free) ------
template <typename T>
__global__ void __launch_bounds__(kSimtThreads) SimtTiledKernel(MatmulProblem p) {
  constexpr int BM = 64, BN = 64, BK = 16;
  __shared__ float as[BK][BM + 1];
  __shared__ float bs[BK][BN + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t mtiles = (p.m + BM - 1) / BM;
  for (int64_t z = blockIdx.z; z < p.batch_count; z += gridDim.z) {
    const BatchOffsets o = OffsetsOf(p, z);
    const T* a = static_cast<const T*>(p.a) + o.a;
    const T* b = static_cast<const T*>(p.b) + o.b;
    const Epilogue<T> ep(p, z, o);
    for (int64_t mt = blockIdx.y; mt < mtiles; mt += gridDim.y) {
      const int64_t m0 = mt * BM, n0 = static_cast<int64_t>(blockIdx.x) * BN;
      float acc[4][4] = {};
      for (int64_t k0 = 0; k0 < p.k; k0 += BK) {
        for (int e = threadIdx.x; e < BM * BK; e += kSimtThreads) {
          const int r = e / BK, kk = e % BK;  // consecutive threads walk k: coalesced rows of a
          const int64_t gr = m0 + r, gk = k0 + kk;
          as[kk][r] = (gr < p.m && gk < p.k) ? ToFloat(a[gr * p.k + gk]) : 0.f;
        }
        for (int e = threadIdx.x; e < BK * BN; e += kSimtThreads) {
          const int kk = e / BN, c = e % BN;
          const int64_t gk = k0 + kk, gc = n0 + c;
          bs[kk][c] = (gk < p.k && gc < p.n) ? ToFloat(b[gk * p.n + gc]) : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
          float af[4], bf[4];
#pragma unroll
          for (int i = 0; i < 4; ++i) af[i] = as[kk][ty + 16 * i];
#pragma unroll
          for (int j = 0; j < 4; ++j) bf[j] = bs[kk][tx + 16 * j];
#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(af[i], bf[j], acc[i][j]);
        }
        __syncthreads();
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) ep.Store(m0 + ty + 16 * i, n0 + tx + 16 * j, acc[i][j]);
    }
  }
}

// ---- SimtRegisterBlocked (float32) -------------------------------------------------------------------
// BM x BN x 8 tiles, 256 threads as 16x16, each owning a TM x TN block split in two halves per axis
// (rows ty*TM/2 + {0, BM/2}, same for columns) so its shared-memory reads are TM/2-wide vectors from
// consecutive addresses across the warp. The next k-tile is fetched into registers while the current
// one is consumed, then stored to the other shared buffer: one barrier per k-tile.
template <int BM, int BN, int TM, int TN>
__global__ void __launch_bounds__(kSimtThreads) SimtRegisterBlockedKernel(MatmulProblem p) {
  constexpr int BK = 8, VM = TM / 2, VN = TN / 2;
  static_assert(BM == 16 * TM && BN == 16 * TN, "16x16 threads cover the tile");
  constexpr int kALoads = (BM * BK / 4 + kSimtThreads - 1) / kSimtThreads;  // float4 per thread
  constexpr int kBLoads = (BK * BN / 4 + kSimtThreads - 1) / kSimtThreads;
  __shared__ __align__(16) float as[2][BK][BM];
  __shared__ __align__(16) float bs[2][BK][BN];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t mtiles = (p.m + BM - 1) / BM;
  for (int64_t z = blockIdx.z; z < p.batch_count; z += gridDim.z) {
    const BatchOffsets o = OffsetsOf(p, z);
    const float* a = static_cast<const float*>(p.a) + o.a;
    const float* b = static_cast<const float*>(p.b) + o.b;
    const Epilogue<float> ep(p, z, o);
    for (int64_t mt = blockIdx.y; mt < mtiles; mt += gridDim.y) {
      const int64_t m0 = mt * BM, n0 = static_cast<int64_t>(blockIdx.x) * BN;
      float4 ra[kALoads], rb[kBLoads];
      // Global -> registers for k-tile k0 (zero outside the matrix; K and N are multiples of 4).
      auto fetch = [&](int64_t k0) {
#pragma unroll
        for (int l = 0; l < kALoads; ++l) {
          const int e = threadIdx.x + l * kSimtThreads, r = e / (BK / 4), kq = (e % (BK / 4)) * 4;
          const int64_t gr = m0 + r, gk = k0 + kq;
          ra[l] = (e < BM * BK / 4 && gr < p.m && gk < p.k)
                      ? __ldg(reinterpret_cast<const float4*>(a + gr * p.k + gk)) : make_float4(0, 0, 0, 0);
        }
#pragma unroll
        for (int l = 0; l < kBLoads; ++l) {
          const int e = threadIdx.x + l * kSimtThreads, kk = e / (BN / 4), c = (e % (BN / 4)) * 4;
          const int64_t gk = k0 + kk, gc = n0 + c;
          rb[l] = (e < BK * BN / 4 && gk < p.k && gc < p.n)
                      ? __ldg(reinterpret_cast<const float4*>(b + gk * p.n + gc)) : make_float4(0, 0, 0, 0);
        }
      };
      auto stash = [&](int buf) {  // a is stored k-major (transposed) so compute reads rows as vectors
#pragma unroll
        for (int l = 0; l < kALoads; ++l) {
          const int e = threadIdx.x + l * kSimtThreads, r = e / (BK / 4), kq = (e % (BK / 4)) * 4;
          if (e < BM * BK / 4) {
            as[buf][kq + 0][r] = ra[l].x;
            as[buf][kq + 1][r] = ra[l].y;
            as[buf][kq + 2][r] = ra[l].z;
            as[buf][kq + 3][r] = ra[l].w;
          }
        }
#pragma unroll
        for (int l = 0; l < kBLoads; ++l) {
          const int e = threadIdx.x + l * kSimtThreads, kk = e / (BN / 4), c = (e % (BN / 4)) * 4;
          if (e < BK * BN / 4) *reinterpret_cast<float4*>(&bs[buf][kk][c]) = rb[l];
        }
      };
      float acc[TM][TN] = {};
      const int64_t ktiles = (p.k + BK - 1) / BK;
      if (ktiles > 0) {
        fetch(0);
        stash(0);
      }
      __syncthreads();
      for (int64_t kt = 0; kt < ktiles; ++kt) {
        const int buf = kt & 1;
        if (kt + 1 < ktiles) fetch((kt + 1) * BK);
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
          float af[TM], bf[TN];
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const Pack<float, VM> va = *reinterpret_cast<const Pack<float, VM>*>(&as[buf][kk][ty * VM + h * BM / 2]);
            const Pack<float, VN> vb = *reinterpret_cast<const Pack<float, VN>*>(&bs[buf][kk][tx * VN + h * BN / 2]);
#pragma unroll
            for (int i = 0; i < VM; ++i) af[h * VM + i] = va.v[i];
#pragma unroll
            for (int j = 0; j < VN; ++j) bf[h * VN + j] = vb.v[j];
          }
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(af[i], bf[j], acc[i][j]);
        }
        if (kt + 1 < ktiles) stash(buf ^ 1);  // the other buffer was last read before the previous barrier
        __syncthreads();
      }
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const int64_t row = m0 + ty * VM + (i / VM) * (BM / 2) + i % VM;
#pragma unroll
        for (int j = 0; j < TN; ++j) ep.Store(row, n0 + tx * VN + (j / VN) * (BN / 2) + j % VN, acc[i][j]);
      }
    }
  }
}

// ---- SkinnyM: M <= kSkinnyMaxM, N % 8 == 0, 16-byte aligned b -----------------------------------------
// Decode-shaped problems are a stream over b (K x N); the work is spreading that stream over enough
// threads. A block owns 32 columns (4 groups of 8) and splits K over 64 slices; a thread keeps M x 8
// float accumulators. Partial sums meet by shuffles (8 slices per warp) then shared memory (8 warps).
constexpr int kSkinnyMaxM = 8;
constexpr int kSkinnyCols = 32;

template <typename T, int MR>
__global__ void __launch_bounds__(kSimtThreads) SkinnyMKernel(MatmulProblem p) {
  constexpr int kGroups = kSkinnyCols / 8, kSlices = kSimtThreads / kGroups, kWarps = kSimtThreads / 32;
  __shared__ float part[kWarps][MR][kSkinnyCols];
  const int g = threadIdx.x % kGroups, slice = threadIdx.x / kGroups;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int64_t z = blockIdx.z; z < p.batch_count; z += gridDim.z) {
    const BatchOffsets o = OffsetsOf(p, z);
    const T* a = static_cast<const T*>(p.a) + o.a;
    const T* b = static_cast<const T*>(p.b) + o.b;
    const Epilogue<T> ep(p, z, o);
    const int64_t c0 = static_cast<int64_t>(blockIdx.x) * kSkinnyCols + g * 8;
    const bool live = c0 < p.n;  // n % 8 == 0: a group is wholly inside or wholly outside
    float acc[MR][8] = {};
    constexpr int kUnroll = 4;  // independent 16-byte loads in flight per thread
    int64_t k = slice;
    for (; k + (kUnroll - 1) * kSlices < p.k; k += kUnroll * kSlices) {
      Pack<T, 8> vb[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        if (live) vb[u] = *reinterpret_cast<const Pack<T, 8>*>(b + (k + u * kSlices) * p.n + c0);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int r = 0; r < MR; ++r) {
          const float av = r < p.m ? ToFloat(a[r * p.k + k + u * kSlices]) : 0.f;
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[r][j] = fmaf(av, live ? ToFloat(vb[u].v[j]) : 0.f, acc[r][j]);
        }
      }
    }
    for (; k < p.k; k += kSlices) {
      Pack<T, 8> vb;
      if (live) vb = *reinterpret_cast<const Pack<T, 8>*>(b + k * p.n + c0);
#pragma unroll
      for (int r = 0; r < MR; ++r) {
        const float av = r < p.m ? ToFloat(a[r * p.k + k]) : 0.f;
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[r][j] = fmaf(av, live ? ToFloat(vb.v[j]) : 0.f, acc[r][j]);
      }
    }
    // Lanes with the same g hold the same columns: reduce over the warp's 8 slices (lane bits 2..4).
#pragma unroll
    for (int r = 0; r < MR; ++r)
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int s = kGroups; s < 32; s *= 2) acc[r][j] += __shfl_xor_sync(0xffffffffu, acc[r][j], s);
    __syncthreads();  // part[] may still be read by the previous batch index
    if (lane < kGroups) {
#pragma unroll
      for (int r = 0; r < MR; ++r)
#pragma unroll
        for (int j = 0; j < 8; ++j) part[warp][r][g * 8 + j] = acc[r][j];
    }
    __syncthreads();
    for (int e = threadIdx.x; e < MR * kSkinnyCols; e += kSimtThreads) {
      const int r = e / kSkinnyCols, c = e % kSkinnyCols;
      float s = 0.f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) s += part[w][r][c];
      ep.Store(r, static_cast<int64_t>(blockIdx.x) * kSkinnyCols + c, s);
    }
  }
}

}  // namespace jk::mm
