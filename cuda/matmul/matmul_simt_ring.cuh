// SimtRing: exact float32 for the smallest problems (64x64 tiles filling at most a quarter of the SMs, K <= 2048) on
// many small CTAs, each running the whole of K through a cp.async ring.
//
// Why: there the double-buffered kernels run few CTAs (the split-K cluster kernel with 4-8 ranks, or the 32x64
// tile alone), each a chain of global latencies and cluster barriers. XLA's kernel for float32 512x512x256 at
// precision HIGHEST (Nsight Compute, bench/lab/s22_h200.md call 4) is 512 CTAs of 64 threads, 8 outputs a thread,
// 24.6 KB of shared memory, about four CTAs an SM; its Triton config (--xla_dump_to, bench/lab/s23_h200.md call 1):
// 16x32 tiles, block_k 64, 3 stages, 2 warps. This kernel takes that geometry with 32-deep k-tiles in a ring of 4
// (16-deep in a ring of 8 for K <= 128; the launcher). H200 (s22 call 9 and s23 call 3, us, before / ring, jnp):
// 128^3 6.1 / 3.9 (2.7), 1000x100x100 6.7 / 5.3 (4.9), 256x512x1024 22.3 / 18.4 (13.3). It does not reach XLA's
// speed at 512x512x256 (9.1-9.3 against 6.8; XLA's 64 x 3 ring 10.3; the split-K kernel 8.9): Nsight Compute puts
// it at 1.21x XLA's instructions and 0.9x its issue rate (s23 call 3), so the launcher keeps the split-K kernel where
// two ranks fill the SMs. Copying a CTA's whole K panel at once instead of a ring lost everywhere
// (bench/lab/s22_simt_panel.patch): the first k-tiles arrive behind all the others.
//
// A CTA: a BM x BN tile, (BM / TM) x (BN / 4) threads, each TM x 4 outputs (rows TM ty .., columns 4 tx ..). A
// k-tile is BK deep: a's rows (k contiguous, padded to BK + 4 floats so the rows a warp reads, TM apart, start in
// different groups of 4 banks; dense rows with XOR-swizzled quads lost 10-18% from K = 256 on, bench/lab/s23_h200.md
// call 12) and b's BK rows of BN floats, copied with 16-byte cp.async (zeros outside the
// matrix). Per 4 k a thread reads TM float4 of a and 4 of b for 16 TM FMAs. kStages - 1 k-tiles are in flight
// while one is multiplied.
//
// Requires (the launcher checks): float32, K % 4 == 0, N % 4 == 0, a and b 16-byte aligned in every batch matrix,
// sm_80+ (cp.async).
#pragma once
#include <cstdint>

#include "common/device.cuh"
#include "matmul/matmul_epilogue.cuh"
#include "matmul/matmul_simt.cuh"  // CpAsyncOrZero, CpAsyncCommitGroup, CpAsyncWaitGroup

namespace jk::mm {

template <int BM, int BN, int TM, int BK, int kStages>
struct SimtRingShape {
  static constexpr int kTx = BN / 4, kThreads = (BM / TM) * kTx;
  static constexpr int kARow = BK + 4;  // floats per padded row of a's k-tile
  static constexpr int kStageFloats = BM * kARow + BK * BN;
  static constexpr int kSmemBytes = kStages * kStageFloats * 4;
  static constexpr int kACopies = BM * BK / 4 / kThreads, kBCopies = BK * BN / 4 / kThreads;  // float4 a thread
  static_assert(BM * BK / 4 % kThreads == 0 && BK * BN / 4 % kThreads == 0, "whole copy rounds");
  static_assert(kThreads % 32 == 0 && kStages >= 2 && BK % 4 == 0, "whole warps, a ring, whole quads");
};

template <int BM, int BN, int TM, int BK, int kStages>
__global__ void __launch_bounds__(SimtRingShape<BM, BN, TM, BK, kStages>::kThreads)
    SimtRingKernel(MatmulProblem p) {
  using S = SimtRingShape<BM, BN, TM, BK, kStages>;
  extern __shared__ __align__(16) float ring[];
  const int t = static_cast<int>(threadIdx.x), tx = t % S::kTx, ty = t / S::kTx;
  const bool vec_out = p.n % 4 == 0 && IsAligned(p.out, 16);
  const int64_t mtiles = (p.m + BM - 1) / BM, ktiles = (p.k + BK - 1) / BK;
  for (int64_t z = blockIdx.z; z < p.batch_count; z += gridDim.z) {
    const BatchOffsets o = OffsetsOf(p, z);
    const float* a = static_cast<const float*>(p.a) + o.a;
    const float* b = static_cast<const float*>(p.b) + o.b;
    for (int64_t mt = blockIdx.y; mt < mtiles; mt += gridDim.y) {
      const int64_t m0 = mt * BM, n0 = static_cast<int64_t>(blockIdx.x) * BN;
      // Copy slots, fixed for the tile: a's float4 e = t + l kThreads is row e / (BK / 4), quad e % (BK / 4); b's is
      // k row e / kTx, column quad e % kTx. The source pointers run along K with the copies (a += BK, b += BK rows)
      // and kleft counts the k rows left from the next k-tile on: recomputing each source from k0 cost ~100
      // instructions a k-tile (64-bit products), a quarter of the kernel's instructions at 512x512x256.
      const float* asrc[S::kACopies];
      const float* bsrc[S::kBCopies];
      int adst[S::kACopies], bdst[S::kBCopies], aq[S::kACopies], bk[S::kBCopies];
      bool aok[S::kACopies], bok[S::kBCopies];
#pragma unroll
      for (int l = 0; l < S::kACopies; ++l) {
        const int e = t + l * S::kThreads, r = e / (BK / 4);
        aq[l] = 4 * (e % (BK / 4));
        aok[l] = m0 + r < p.m;
        asrc[l] = a + (aok[l] ? (m0 + r) * p.k : 0) + aq[l];
        adst[l] = r * S::kARow + aq[l];
      }
#pragma unroll
      for (int l = 0; l < S::kBCopies; ++l) {
        const int e = t + l * S::kThreads, c = 4 * (e % S::kTx);
        bk[l] = e / S::kTx;
        bok[l] = n0 + c < p.n;
        bsrc[l] = b + (bok[l] ? n0 + c : 0) + static_cast<int64_t>(bk[l]) * p.n;
        bdst[l] = BM * S::kARow + bk[l] * BN + c;
      }
      const int64_t bstep = BK * p.n;
      int64_t kleft = p.k;
      const auto issue = [&](int slot) {  // the next k-tile into ring slot `slot`
        float* st = ring + slot * S::kStageFloats;
        const int kl = kleft < BK ? static_cast<int>(kleft) : BK;  // 32-bit compares below
#pragma unroll
        for (int l = 0; l < S::kACopies; ++l) {
          CpAsyncOrZero<16>(st + adst[l], asrc[l], aok[l] && aq[l] < kl);
          asrc[l] += BK;
        }
#pragma unroll
        for (int l = 0; l < S::kBCopies; ++l) {
          CpAsyncOrZero<16>(st + bdst[l], bsrc[l], bok[l] && bk[l] < kl);
          bsrc[l] += bstep;
        }
        kleft -= BK;
      };
      // Commit groups are committed even when empty, so "at most kStages - 2 pending" always means "k-tile kt has
      // landed".
#pragma unroll
      for (int s = 0; s < kStages - 1; ++s) {
        if (s < ktiles) issue(s);
        CpAsyncCommitGroup();
      }
      float acc[TM][4] = {};
      int slot = 0;
      for (int64_t kt = 0; kt < ktiles; ++kt) {
        CpAsyncWaitGroup<kStages - 2>();
        __syncthreads();  // k-tile kt visible to all; the slot refilled below was read at kt - 1
        const int64_t next = kt + kStages - 1;
        if (next < ktiles) issue(slot == 0 ? kStages - 1 : slot - 1);
        CpAsyncCommitGroup();
        const float* as = ring + slot * S::kStageFloats;
        const float* bs = as + BM * S::kARow;
        // Each k-tile's products summed apart, then added to the tile's: chains of BK + K / BK additions instead
        // of K, so the error at K = 2048 stays near jnp's (blocked summation).
        float part[TM][4] = {};
#pragma unroll
        for (int q = 0; q < BK / 4; ++q) {
          float4 av[TM], bv[4];
#pragma unroll
          for (int i = 0; i < TM; ++i) av[i] = *reinterpret_cast<const float4*>(as + (TM * ty + i) * S::kARow + 4 * q);
#pragma unroll
          for (int kk = 0; kk < 4; ++kk) bv[kk] = *reinterpret_cast<const float4*>(bs + (4 * q + kk) * BN + 4 * tx);
#pragma unroll
          for (int i = 0; i < TM; ++i) {
            const float ak[4] = {av[i].x, av[i].y, av[i].z, av[i].w};
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) {
              part[i][0] = fmaf(ak[kk], bv[kk].x, part[i][0]);
              part[i][1] = fmaf(ak[kk], bv[kk].y, part[i][1]);
              part[i][2] = fmaf(ak[kk], bv[kk].z, part[i][2]);
              part[i][3] = fmaf(ak[kk], bv[kk].w, part[i][3]);
            }
          }
        }
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[i][j] += part[i][j];
        slot = slot + 1 == kStages ? 0 : slot + 1;
      }
      CpAsyncWaitGroup<0>();
      const Epilogue<float> ep(p, z, o);
#pragma unroll
      for (int i = 0; i < TM; ++i) ep.template StoreVec<4>(m0 + TM * ty + i, n0 + 4 * tx, acc[i], vec_out);
      __syncthreads();  // the ring is read before the next tile's copies refill it
    }
  }
}

}  // namespace jk::mm
