// Hopper tensor-core matmul with the operand roles swapped (sm_90a): each CTA computes a tile of C^T = B^T A^T.
//
// Why: WgmmaTmaKernel's tiles are 128 rows by 64-256 columns, because wgmma's M is 64 a warpgroup and b's panels,
// read N-major, come in 64-column swizzle atoms. Swapped, wgmma's M runs along our N (b's 64-column panel as the
// M-major A operand, the transpose bit set) and wgmma's N along our M (a's rows as the K-major B operand), where
// any multiple of 8 rows is legal. So a CTA takes 144 rows x 64 columns, and 1000^3 is 7 x 16 = 112 CTAs: 28
// clusters of 4, all on the GPU at once (32 clusters of 4, as 128-row tiles need, are more than fit; bench/lab/
// s23_h200.md call 4). The 4 CTAs of a cluster take 4 adjacent 64-column tiles of the same 144 rows and share a's
// rows through TMA multicast (ranks 0-2 each load 48 of them into all four CTAs), so a CTA reads 4.5 + 8 KiB a
// k-tile from L2 for 9216 outputs, against the 128x64 pairs' 8 + 8 KiB for 8192. That is cuBLAS's geometry for
// 1000^3 (64x144 tiles in clusters of 4, 112 CTAs; bench/lab/s22_h200.md call 4), whose rows start mid-sector:
// there the kernels are bound by L2 -> SM traffic.
//
// CTA: 384 threads. Warpgroup 0's first thread is the producer (TMA into a STAGES-deep ring, as WgmmaTmaKernel);
// consumer warpgroup w in {1, 2} owns rows [72 (w - 1), + 72) of the tile: per 16 k one wgmma m64n72k16 (36
// accumulator registers a thread: D[our column][our row]). A stage is free once the consumers of all four CTAs
// have read it (each consumer warp arrives on the four "empty" barriers), since three producers write into it.
// Epilogue: the accumulators go to shared memory through transposing stmatrix (each 8x8 fragment becomes 8 output
// rows of 16 bytes) in the 128-byte swizzle, then one TMA store of the warpgroup's 72 x 64 box (clipped at the
// matrix edges).
//
// Plain matmuls only (no bias, residual or activation), 16-bit, with WgmmaTmaKernel's layout requirements; the
// launcher (matmul_wgmma_launch.cu, UseSwap) says where it runs.
#pragma once
#include "matmul/matmul_wgmma.cuh"  // the PTX wrappers, kWgmmaEpiGroup, WgmmaTileCoord

namespace jk::mm {

constexpr int kSwapRows = 144;      // rows of a (and of the output) a CTA computes: wgmma N, 72 a warpgroup
constexpr int kSwapHalf = kSwapRows / 2;
constexpr int kSwapCols = 64;       // output columns a CTA computes: wgmma M, one panel of b
constexpr int kSwapCluster = 4;     // CTAs along N sharing a's rows
constexpr int kSwapShareRows = 48;  // a's rows each of the first kSwapRows / 48 ranks loads for the whole cluster
constexpr int kSwapSharers = kSwapRows / kSwapShareRows;

template <int STAGES>
struct WgmmaSwapTile {
  static constexpr int kAStage = kSwapRows * 128;  // 18 KiB: 144 rows x 64 k, K-major
  static constexpr int kBStage = 64 * 128;         // 8 KiB: 64 k-rows x 64 columns, N-major
  static constexpr int kStageBytes = kAStage + kBStage;
  static constexpr int kSmemBytes = STAGES * kStageBytes + 2 * kWgmmaEpiGroup + 2 * STAGES * 8 + 1024;
  // Every stage, share and box starts on the 128-byte swizzle's 1 KiB atom.
  static_assert(kAStage % 1024 == 0 && kBStage % 1024 == 0 && (kSwapShareRows * 128) % 1024 == 0, "1 KiB atoms");
  static_assert(kSwapRows % kSwapShareRows == 0 && kSwapSharers <= kSwapCluster, "the sharers cover the rows");
  static_assert(kSwapHalf % 8 == 0 && kSwapHalf * 128 <= kWgmmaEpiGroup, "a warpgroup's box fits its epilogue area");
  static_assert(kSmemBytes <= 227 * 1024, "fits the opt-in shared memory of an sm_90 CTA");
};

// Cluster tile t (kSwapRows x kSwapCluster * kSwapCols) of the flattened (batch, M-tile, column group) space, M
// fastest; this CTA's 64 columns of it.
__device__ __forceinline__ WgmmaTileCoord WgmmaSwapTileOf(int64_t t, int64_t mtiles, int64_t groups, uint32_t rank) {
  const int64_t per_batch = mtiles * groups, z = t / per_batch, pid = t % per_batch;
  return {z, (pid % mtiles) * kSwapRows, (pid / mtiles) * (kSwapCluster * kSwapCols) + rank * kSwapCols};
}

// The cluster tiles (kSwapRows x kSwapCluster * kSwapCols) along M and N, in all, and the k-tiles: the kernel's loops
// and the launcher's grid.
__host__ __device__ inline WgmmaCounts WgmmaSwapCounts(const MatmulProblem& p) {
  const int64_t mtiles = (p.m + kSwapRows - 1) / kSwapRows;
  const int64_t groups = (p.n + kSwapCluster * kSwapCols - 1) / (kSwapCluster * kSwapCols);
  return WgmmaCounts{mtiles, groups, mtiles * groups * p.batch_count, static_cast<int>((p.k + kWgmmaBK - 1) / kWgmmaBK)};
}

// tma_a: box of 48 rows x 64 k; tma_b: 64 k-rows x 64 columns; tma_out: 72 rows x 64 columns. Launched as
// clusters of kSwapCluster along x, persistent over the cluster tiles.
template <typename T, int STAGES>
__global__ void __launch_bounds__(kWgmmaThreads, 1)
    WgmmaSwapKernel(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
                    const __grid_constant__ CUtensorMap tma_out, const __grid_constant__ MatmulProblem p) {
#ifdef JK_WGMMA_DEVICE
  using C = WgmmaSwapTile<STAGES>;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  const uint32_t sa = (smem_base + 1023) & ~1023u;
  const uint32_t sb = sa + STAGES * C::kAStage, epi = sb + STAGES * C::kBStage, bars = epi + 2 * kWgmmaEpiGroup;
  auto full = [&](int s) { return bars + 8 * s; };
  auto empty = [&](int s) { return bars + 8 * (STAGES + s); };
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  const uint32_t rank = blockIdx.x % kSwapCluster;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      MbarInit(full(s), 1);
      MbarInit(empty(s), kSwapCluster * 8);  // one lane of each consumer warp of every CTA of the cluster
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  ClusterBarrier();  // the peers multicast into this CTA's ring and arrive on its barriers

  // Counts computed by each role after its register reallocation (see WgmmaTmaKernel).
  const int64_t first = blockIdx.x / kSwapCluster, stride = gridDim.x / kSwapCluster;

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid != 0) return;
    const auto [mtiles, groups, tiles, ktiles] = WgmmaSwapCounts(p);
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tma_a)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tma_b)) : "memory");
    int stage = 0;
    uint32_t phase = 0;
    for (int64_t t = first; t < tiles; t += stride) {
      const WgmmaTileCoord tc = WgmmaSwapTileOf(t, mtiles, groups, rank);
      const BatchOffsets o = OffsetsOf(p, tc.z);
      const int32_t za = static_cast<int32_t>(o.a / (p.m * p.k)), zb = static_cast<int32_t>(o.b / (p.k * p.n));
      for (int kt = 0; kt < ktiles; ++kt) {
        MbarWait(empty(stage), phase ^ 1);  // a fresh barrier counts its "previous" phase as complete
        // Both shares of a (from the sharers, possibly not yet armed here: the count goes negative until this
        // arrival) and this CTA's panel of b.
        MbarExpectTx(full(stage), C::kStageBytes);
        const int32_t k0 = kt * kWgmmaBK;
        if (rank < kSwapSharers)
          TmaLoad3dMulticast(sa + stage * C::kAStage + rank * (kSwapShareRows * 128), &tma_a, k0,
                             static_cast<int32_t>(tc.m0) + kSwapShareRows * static_cast<int32_t>(rank), za, full(stage),
                             (1u << kSwapCluster) - 1);
        TmaLoad3d(sb + stage * C::kBStage, &tma_b, static_cast<int32_t>(tc.n0), k0, zb, full(stage));
        if (++stage == STAGES) stage = 0, phase ^= 1;
      }
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int w = wg - 1;
  const auto [mtiles, groups, tiles, ktiles] = WgmmaSwapCounts(p);
  if (tid == 0) asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tma_out)) : "memory");
  // A stage goes back to all four producers' CTAs once this warp's wgmmas that read it are complete.
  const auto release = [&](int s) {
    if (tid % 32 == 0) {
#pragma unroll
      for (uint32_t r = 0; r < kSwapCluster; ++r) MbarArriveRemote(MapaShared(empty(s), r));
    }
  };
  float acc[36];
  int stage = 0;
  uint32_t phase = 0;
  for (int64_t t = first; t < tiles; t += stride) {
#pragma unroll
    for (int r = 0; r < 36; ++r) {
      acc[r] = 0.f;
      FenceOperand(acc[r]);
    }
    int prev = 0;
    for (int kt = 0; kt < ktiles; ++kt) {
      MbarWait(full(stage), phase);
      WgmmaFence();
      const uint32_t rows = sa + stage * C::kAStage + w * (kSwapHalf * 128), panel = sb + stage * C::kBStage;
#pragma unroll
      for (int ks = 0; ks < kWgmmaBK / 16; ++ks) {
        // 16 k of the panel: two 1 KiB atoms of 8 k-rows (M-major, one 64-wide atom along M, so LBO unused);
        // 16 k of the rows: 32 bytes along their swizzled 128-byte rows (K-major, 8-row groups 1 KiB apart).
        WgmmaM64N72K16TransA<T>(acc, SmemDesc(panel + ks * 2048, C::kBStage, 1024), SmemDesc(rows + ks * 32, 16, 1024));
      }
      WgmmaCommit();
      WgmmaWait<1>();  // the previous k-tile's wgmmas have retired: its stage is free
      if (kt > 0) release(prev);
      prev = stage;
      if (++stage == STAGES) stage = 0, phase ^= 1;
    }
    WgmmaWait<0>();
#pragma unroll
    for (int r = 0; r < 36; ++r) FenceOperand(acc[r]);
    if (ktiles > 0) release(prev);

    // Register 4q + i holds D[16 warp + lane / 4 + 8 (i / 2)][8q + 2 (lane % 4) + i % 2]: our column, our row. Each
    // pair (i = 0, 1 or 2, 3) is one 8x8 fragment of columns 16 warp + 8h (h = i / 2) and rows 8q..8q + 7; stored
    // transposed, it is 8 output rows of 16 bytes, the row's 16-byte piece 2 warp + h at piece (2 warp + h) ^ row % 8
    // of the swizzled box (the layout the output map's 128-byte swizzle reads).
    const WgmmaTileCoord tc = WgmmaSwapTileOf(t, mtiles, groups, rank);
    const uint32_t box = epi + w * kWgmmaEpiGroup;
    if (tid == 0) BulkWaitRead<0>();  // the box's previous store (the CTA's previous tile) has read it
    NamedBarrier(1 + w, 128);
    const int warp = tid / 32, lane = tid % 32, mat = lane / 8, j = lane % 8;
    const auto slot = [&](int q) {  // this lane's row address for fragment (q + mat / 2, h = mat % 2)
      const int row = 8 * (q + mat / 2) + j, piece = 2 * warp + mat % 2;
      return box + row * 128 + ((piece ^ j) << 4);
    };
#pragma unroll
    for (int q = 0; q + 1 < kSwapHalf / 8; q += 2)
      StoreMatrixX4Trans(slot(q), PackPair<T>(acc[4 * q], acc[4 * q + 1]), PackPair<T>(acc[4 * q + 2], acc[4 * q + 3]),
                         PackPair<T>(acc[4 * q + 4], acc[4 * q + 5]), PackPair<T>(acc[4 * q + 6], acc[4 * q + 7]));
    if constexpr ((kSwapHalf / 8) % 2 == 1) {
      constexpr int q = kSwapHalf / 8 - 1;
      StoreMatrixX2Trans(slot(q), PackPair<T>(acc[4 * q], acc[4 * q + 1]), PackPair<T>(acc[4 * q + 2], acc[4 * q + 3]));
    }
    FenceProxyAsync();
    NamedBarrier(1 + w, 128);
    if (tid == 0) {
      TmaStore3d(&tma_out, box, static_cast<int32_t>(tc.n0), static_cast<int32_t>(tc.m0) + kSwapHalf * w,
                 static_cast<int32_t>(tc.z));
      BulkCommit();
    }
  }
  if (tid == 0) BulkWaitAll();  // the shared memory outlives the last store's reads of it
  ClusterBarrier();             // the peers' consumers arrive on this CTA's barriers until their last k-tile
#endif  // JK_WGMMA_DEVICE
}

}  // namespace jk::mm
