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
// BM x BN x BK tiles, 256 threads as 16x16, each owning a TM x TN block split in two halves per axis
// (rows ty*TM/2 + {0, BM/2}, same for columns) so its shared-memory reads are TM/2-wide vectors from
// consecutive addresses across the warp. The next k-tile is fetched into registers while the current
// one is consumed, then stored to the other shared buffer: one barrier per k-tile.
// The next tile's global loads must be covered by the current tile's math: the 8x8 tile needs ~160
// registers (one block per SM), so it takes BK = 16 (2048 FMA cycles per barrier); the smaller tiles fit
// two blocks per SM and keep BK = 8.
template <int BM, int BN, int TM, int TN, int BK, int kMinBlocks>
__global__ void __launch_bounds__(kSimtThreads, kMinBlocks) SimtRegisterBlockedKernel(MatmulProblem p) {
  constexpr int VM = TM / 2, VN = TN / 2;
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
// Decode-shaped problems are a stream over b (K x N); the work is keeping enough of that stream in
// flight. A block owns 32 columns (4 groups of 8) and splits K over 64 slices; a thread takes chunks of
// kKc consecutive k (16 bytes of a row of a): per chunk it issues kKc independent 16-byte-or-wider loads
// of b rows plus one 16-byte load per row of a, then kKc x 8 x M FMAs into M x 8 float accumulators.
// Partial sums meet by shuffles (the warp's 8 slices) then shared memory (the block's 8 warps).
constexpr int kSkinnyMaxM = 8;
constexpr int kSkinnyCols = 32;

template <typename T, int MR>
__global__ void __launch_bounds__(kSimtThreads) SkinnyMKernel(MatmulProblem p) {
  constexpr int kGroups = kSkinnyCols / 8, kSlices = kSimtThreads / kGroups, kWarps = kSimtThreads / 32;
  constexpr int kKc = 16 / sizeof(T);  // k per chunk: one 16-byte vector of a row of a
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
    // Vector loads of a need every row start 16-byte aligned.
    const bool a_vec = p.k % kKc == 0 && IsAligned(a, 16);
    float acc[MR][8] = {};
    for (int64_t k0 = static_cast<int64_t>(slice) * kKc; k0 < p.k; k0 += static_cast<int64_t>(kSlices) * kKc) {
      const int kn = p.k - k0 < kKc ? static_cast<int>(p.k - k0) : kKc;
      Pack<T, 8> vb[kKc];
#pragma unroll
      for (int u = 0; u < kKc; ++u)
        if (live && u < kn) vb[u] = *reinterpret_cast<const Pack<T, 8>*>(b + (k0 + u) * p.n + c0);
#pragma unroll
      for (int r = 0; r < MR; ++r) {
        if (r >= p.m) break;
        float av[kKc];
        if (a_vec && kn == kKc) {
          const Pack<T, kKc> va = *reinterpret_cast<const Pack<T, kKc>*>(a + r * p.k + k0);
#pragma unroll
          for (int u = 0; u < kKc; ++u) av[u] = ToFloat(va.v[u]);
        } else {
#pragma unroll
          for (int u = 0; u < kKc; ++u) av[u] = u < kn ? ToFloat(a[r * p.k + k0 + u]) : 0.f;
        }
        if (!live) continue;
#pragma unroll
        for (int u = 0; u < kKc; ++u) {
          if (u >= kn) break;
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[r][j] = fmaf(av[u], ToFloat(vb[u].v[j]), acc[r][j]);
        }
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
