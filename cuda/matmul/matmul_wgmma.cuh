// Hopper tensor-core matmul (sm_90a): wgmma fed by TMA through a warp-specialised shared-memory pipeline.
//
// CTA tile 128 x BN x 64, 384 threads in three warpgroups:
//   warpgroup 0  producer: one thread issues the TMA loads (cp.async.bulk.tensor) of each k-tile into a
//                STAGES-deep ring; completion is counted in bytes on the stage's "full" mbarrier.
//   warpgroups 1-2  consumers: each owns 64 rows of the tile and issues wgmma.mma_async m64n128k16 (BN/128
//                of them per 16 k; one m64n64k16 for BN = 64) straight from shared memory, accumulating in
//                float32 registers; a stage goes back to the producer (its "empty" mbarrier) once the
//                wgmmas reading it retired.
// The grid is persistent (one CTA per SM, tiles strided by gridDim.x), so the producer already streams the
// next tile's k-tiles while the consumers run the epilogue of the current one.
//
// Two epilogues (a template parameter, chosen once per launch):
//   kTmaStore (plain matmul: no bias, residual or activation): each consumer warpgroup converts its 64 rows
//     to the output type straight from the accumulators into a 64x64 shared-memory box (128-byte swizzle,
//     so the fragment writes are conflict-free) and one thread hands the box to a TMA store
//     (cp.async.bulk.tensor shared -> global, clipped at the matrix edges). Two boxes per warpgroup take
//     turns, so the consumers only wait for a box's shared-memory reads, never for global writes, and go
//     back to the mainloop after a few hundred instructions.
//   otherwise: 32 columns at a time through a float32 staging area per warp, read back as 8-column row
//     pieces for Epilogue::StoreRow8 (bias, activation, residual; 16-byte global stores).
// Fused epilogues through the TMA-store boxes (kFusedTma) come in two forms chosen per launch: the lean
// "boxed" one (StoreTileTmaFusedBoxed) where bias and residual are laid out for it, the general one elsewhere.
// The boxed form has no global loads: TMA loads the residual into the output boxes, and on the ping-pong
// schedule the accumulators start from the bias. Why it matters (bench/lab/s17_h200.md, a clock64 timeline
// of both warpgroups): each instruction a ping-pong epilogue issues slows the other warpgroup's mainloop by
// about a cycle, and the CTA's last epilogue runs with the tensor cores idle; so on ping-pong the last tile's
// lower 64 rows go to the other (idle) warpgroup, handed over through the drained ring.
//
// Shared-memory layouts, both with the 128-byte swizzle that TMA writes and wgmma reads:
//   A stage: 128 rows x 64 k (128 bytes a row), K-major: 8-row core groups 1024 bytes apart (SBO).
//   B stage: BN/64 panels of 64 k-rows x 64 n (128 bytes a row), N-major ("transposed" B, which wgmma
//            supports for 16-bit types): panels LBO = 8 KiB apart along N, 8-k-row groups SBO = 1024 apart.
// Operands are addressed through 3-d tensor maps (inner dim, outer dim, matrix index), so tails along M,
// N and K are zero-filled by TMA and never read a neighbouring matrix; stores are masked.
//
// Files: the PTX wrappers (mbarriers, TMA, wgmma) are matmul_wgmma_ptx.cuh, the epilogues and their constants
// matmul_wgmma_epilogue.cuh; this file has the tile layout, the tile order and the kernel.
//
// Requires (host side checks): bf16/f16, K and N multiples of 8, a and b 16-byte aligned, every batch
// stride of a a multiple of M*K and of b a multiple of K*N (whole matrices of contiguous buffers).
#pragma once
#include <cuda.h>  // CUtensorMap (a type only: nothing from the driver library is linked)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "common/bulk_copy.cuh"  // FenceProxyAsync, MbarExpectTx, TmaLoad3d
#include "common/device.cuh"
#include "matmul/matmul_epilogue.cuh"
#include "matmul/matmul_wgmma_epilogue.cuh"  // the epilogues and their constants, lab trace hooks
#include "matmul/matmul_wgmma_ptx.cuh"       // JK_WGMMA_DEVICE and the PTX wrappers

namespace jk::mm {

constexpr int kWgmmaBM = 128, kWgmmaBK = 64, kWgmmaThreads = 384;

template <int BN, int STAGES>
struct WgmmaTile {
  static constexpr int kAStage = kWgmmaBM * kWgmmaBK * 2;  // 16 KiB
  static constexpr int kBPanel = kWgmmaBK * 64 * 2;        // 8 KiB: 64 k-rows x 64 n
  static constexpr int kBStage = (BN / 64) * kBPanel;
  static constexpr int kStageBytes = kAStage + kBStage;    // TMA transaction bytes per stage
  // The ring, the two warpgroups' epilogue areas (1 KiB aligned: the output boxes are swizzled), then 2
  // mbarriers per stage; +1 KiB to align the ring to the 128-byte swizzle's 1 KiB atom.
  // The 2 extra mbarriers serve the split-K exchange, 4 more the boxed epilogue's residual loads.
  static constexpr int kSmemBytes = STAGES * kStageBytes + 2 * kWgmmaEpiGroup + (2 * STAGES + 6) * 8 + 1024;
  static_assert(BN == 64 || BN % 128 == 0, "BN is one m64n64 wgmma or whole m64n128 ones");
  static_assert(kSmemBytes <= 227 * 1024, "fits the opt-in shared memory of an sm_90 CTA");
  static_assert(STAGES * kStageBytes >= 2 * (BN < 128 ? 1 : BN / 128) * 64 * 128 * 4, "split-K partials fit the ring");
};

// The tile a CTA steps by, or with multicast a cluster of 2: 128 x 2 BN where the pair shares a, 256 x BN where it
// shares b. The kernel's tile counts and the launcher's grid both come from these.
__host__ __device__ constexpr int WgmmaStepM(bool share_b) { return share_b ? 2 * kWgmmaBM : kWgmmaBM; }
__host__ __device__ constexpr int WgmmaStepN(int bn, bool share_a) { return share_a ? 2 * bn : bn; }

// Tile t of the flattened (batch, M-tile, N-tile) space; within a batch index, 8 consecutive M-tiles sweep
// the N-tiles together so concurrently running CTAs share panels of a and b in L2.
struct WgmmaCounts {
  int64_t mtiles, ntiles, tiles;
  int ktiles;
};
struct WgmmaTileCoord {
  int64_t z;
  int64_t m0, n0;
};
// The k-tiles of this CTA: all of them, or with split-K (clusters of `split` CTAs along x sharing a tile)
// its rank's contiguous share.
struct WgmmaKRange {
  int begin, end;
};
__device__ __forceinline__ WgmmaKRange WgmmaKRangeOf(int ktiles, int split) {
  const int share = (ktiles + split - 1) / split, rank = static_cast<int>(blockIdx.x % split);
  const int begin = rank * share < ktiles ? rank * share : ktiles;
  return {begin, begin + share < ktiles ? begin + share : ktiles};
}
__device__ __forceinline__ WgmmaTileCoord WgmmaTileOf(int64_t t, int64_t mtiles, int64_t ntiles, int bn) {
  constexpr int64_t kGroup = 8;
  const int64_t per_batch = mtiles * ntiles, z = t / per_batch, pid = t % per_batch;
  const int64_t per_group = kGroup * ntiles, first_m = (pid / per_group) * kGroup;
  const int64_t group_m = mtiles - first_m < kGroup ? mtiles - first_m : kGroup;
  return {z, (first_m + (pid % per_group) % group_m) * kWgmmaBM, ((pid % per_group) / group_m) * bn};
}

// tma_out (3-d over the batch's contiguous output matrices, 64x64 boxes) is read only by the kTmaStore
// epilogue, which applies when the problem has no bias, residual or activation.
//
// Split-K (split == 2, cooperative schedule only; launched as clusters of 2 CTAs along x with one tile per
// cluster, grid = 2 x tiles): each rank runs half of the tile's k-tiles; rank 1 writes its float32
// accumulators into rank 0's ring through distributed shared memory, rank 0 adds them and runs the
// epilogue. For problems with too few tiles to fill the SMs (1000^3: 64 tiles of 128x128).
//
// Schedules: cooperative (kPingPong false): both consumer warpgroups work on every tile, 64 rows each,
// and both run its epilogue while the tensor cores idle (only the producer's loads continue). Ping-pong
// (BN = 128, either epilogue): the CTA's tiles alternate between the warpgroups, each computing
// a whole 128 x 128 tile; the shared ring hands out k-tiles in tile order, so one warpgroup's mainloop
// runs while the other does its epilogue, and each skips the other's k-tiles in its ring position. A
// warpgroup starts a tile's mainloop only once the other has waited for every k-tile of the tile before
// (named barrier 3 + w): a "full" barrier's parity then always refers to the next phase, never to one two
// phases ahead, which a warpgroup running ahead by a whole tile would wrongly see as complete.
//
// Multicast pairs (kMulticast, cooperative, launched as clusters of 2 along x with split == 2), for kernels bound
// by L2 -> SM traffic (1024^3 in 128x64 tiles reads ~10 TB/s from L2, 128x256 tiles at 800 TFLOP/s ~9 TB/s);
// rows that start 16 bytes into a 32-byte sector cost 5 sectors and 2 requests per 128-byte box row, not 4 and 1.
// - kMcShareA: the two CTAs take the two BN-column halves of a 128 x 2 BN tile, so they share its a rows. Each
//   producer loads half of them (64 rows; tma_a's box is 64 rows) into both CTAs' rings (TMA multicast) and its
//   own b panels; a CTA reads a third less at BN = 64.
// - kMcShareB: the two CTAs take the two 128-row halves of a 256 x BN tile; each producer loads its own a box and
//   half of the b stage (BN >= 128: half of the 64-column panels; BN = 64: 32 of the 64 k-rows, tma_b's box is
//   32 rows) into both CTAs' rings: 16 + BN / 4 KiB a k-tile instead of 16 + BN / 2.
// Each CTA's "full" barrier counts the bytes of both producers. A stage is free only once the consumers of both
// CTAs have read it: they arrive on both CTAs' "empty" barriers. On sector-aligned rows the pairs' lockstep
// costs more than the traffic saves (bench/lab/matmul_mc_h200.md, s20_h200.md); the launcher's UseMulticast /
// UseMulticastB say where they run.
constexpr int kMcShareA = 1, kMcShareB = 2;
template <typename T, int BN, int STAGES, bool kTmaStore, bool kPingPong, bool kFusedTma = false,
          int kMulticast = 0>
__global__ void __launch_bounds__(kWgmmaThreads, 1)
    WgmmaTmaKernel(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
                   const __grid_constant__ CUtensorMap tma_out, const __grid_constant__ CUtensorMap tma_res,
                   const __grid_constant__ MatmulProblem p, int epi_flags, int split) {
#ifdef JK_WGMMA_DEVICE
  using C = WgmmaTile<BN, STAGES>;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  const uint32_t sa = (smem_base + 1023) & ~1023u;
  const uint32_t sb = sa + STAGES * C::kAStage, epi = sb + STAGES * C::kBStage, bars = epi + 2 * kWgmmaEpiGroup;
  auto full = [&](int s) { return bars + 8 * s; };             // producer -> consumers: stage landed
  auto empty = [&](int s) { return bars + 8 * (STAGES + s); };  // consumers -> producer: stage free
  // Split-K (split == 2): rank 0 -> rank 1 "my ring is free for your partials", rank 1 -> rank 0 "sent".
  const uint32_t xfree = bars + 16 * STAGES, xdata = xfree + 8;
  // The boxed epilogue (kWgmmaEpiBoxed with a residual): consumer warpgroup w's two residual-box barriers.
  const auto resbar = [&](int w) { return xdata + 8 + 16 * w; };
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;

  static_assert(!kMulticast || !kPingPong || (kMulticast == kMcShareB && BN == 128),
                "multicast pairs: cooperative, or ping-pong 128x128 tiles sharing b");
  constexpr bool kShareA = kMulticast == kMcShareA, kShareB = kMulticast == kMcShareB;
  // kMulticast: this CTA's rank in its cluster of 2, and the other CTA's.
  const int rank = static_cast<int>(blockIdx.x % 2);
  const uint32_t peer = static_cast<uint32_t>(rank ^ 1);
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      MbarInit(full(s), 1);
      // Every thread of the consuming warpgroup(s) arrives; with kMulticast one lane per consumer warp, of
      // both CTAs (a remote arrival per thread throttled the pairs to half speed).
      MbarInit(empty(s), kMulticast ? 2 * (kPingPong ? 4 : 8) : kPingPong ? 128 : 256);
    }
    MbarInit(xfree, 1);
    MbarInit(xdata, 256);
    for (int b = 0; b < 4; ++b) MbarInit(resbar(0) + 8 * b, 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  // With split-K the other rank arrives on these barriers: they must be initialised cluster-wide first.
  if (split > 1) ClusterBarrier();
  else __syncthreads();

  // The tile counts, computed by each role after its register reallocation (setmaxnreg): a value live
  // across it must fit the producer's 40 registers, and ptxas had spilled ktiles to local memory.
  // kMulticast: tiles of 128 x 2 BN (kShareB: 256 x BN), one per cluster.
  constexpr int kTileN = WgmmaStepN(BN, kShareA), kTileM = WgmmaStepM(kShareB);
  const auto counts = [&p] {
    const int64_t mtiles = (p.m + kTileM - 1) / kTileM, ntiles = (p.n + kTileN - 1) / kTileN;
    return WgmmaCounts{mtiles, ntiles, mtiles * ntiles * p.batch_count,
                       static_cast<int>((p.k + kWgmmaBK - 1) / kWgmmaBK)};
  };
  // This CTA's tile t (multicast pairs: its half of the cluster's tile).
  const auto tile_of = [&](int64_t t, int64_t mtiles, int64_t ntiles) {
    WgmmaTileCoord tc = WgmmaTileOf(t, mtiles, ntiles, kTileN);
    if constexpr (kShareB) tc.m0 = 2 * tc.m0 + kWgmmaBM * rank;  // WgmmaTileOf counts m in 128-row units
    else if constexpr (kShareA) tc.n0 += BN * rank;
    return tc;
  };

  if (wg == 0) {
    // Producer: the other 127 threads leave at once; their registers go to the consumers.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid != 0) return;
    const auto [mtiles, ntiles, tiles, ktiles] = counts();
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tma_a)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tma_b)) : "memory");
    int stage = 0;
    uint32_t phase = 0;
    const WgmmaKRange kr = kMulticast ? WgmmaKRange{0, ktiles} : WgmmaKRangeOf(ktiles, split);
    for (int64_t t = blockIdx.x / split; t < tiles; t += gridDim.x / split) {
      const WgmmaTileCoord tc = tile_of(t, mtiles, ntiles);
      const BatchOffsets o = OffsetsOf(p, tc.z);
      const int32_t za = static_cast<int32_t>(o.a / (p.m * p.k)), zb = static_cast<int32_t>(o.b / (p.k * p.n));
      for (int kt = kr.begin; kt < kr.end; ++kt) {
        MbarWait(empty(stage), phase ^ 1);  // a fresh barrier counts its "previous" phase as complete
        MbarExpectTx(full(stage), C::kStageBytes);
        const int32_t k0 = kt * kWgmmaBK;
        if constexpr (kShareA) {
          TmaLoad3dMulticast(sa + stage * C::kAStage + rank * (64 * 128), &tma_a, k0,
                             static_cast<int32_t>(tc.m0) + 64 * rank, za, full(stage), 3);
        } else {
          TmaLoad3d(sa + stage * C::kAStage, &tma_a, k0, static_cast<int32_t>(tc.m0), za, full(stage));
        }
        if constexpr (kShareB && BN == 64) {  // this rank's 32 k-rows of the panel (tma_b's box is 32 rows)
          TmaLoad3dMulticast(sb + stage * C::kBStage + rank * (32 * 128), &tma_b, static_cast<int32_t>(tc.n0),
                             k0 + 32 * rank, zb, full(stage), 3);
        } else if constexpr (kShareB) {  // this rank's half of the b panels, into both CTAs' rings
          constexpr int kHalf = BN / 128;
#pragma unroll
          for (int c = kHalf * rank; c < kHalf * rank + kHalf; ++c)
            TmaLoad3dMulticast(sb + stage * C::kBStage + c * C::kBPanel, &tma_b, static_cast<int32_t>(tc.n0) + 64 * c,
                               k0, zb, full(stage), 3);
        } else {
#pragma unroll
          for (int c = 0; c < BN / 64; ++c)
            TmaLoad3d(sb + stage * C::kBStage + c * C::kBPanel, &tma_b, static_cast<int32_t>(tc.n0) + 64 * c, k0, zb,
                      full(stage));
        }
        if (++stage == STAGES) stage = 0, phase ^= 1;
      }
    }
    return;
  }

  // Consumers: cooperative, warpgroup w owns rows [64 w, 64 w + 64) of every tile; ping-pong, all rows of
  // every other tile.
  static_assert(!kPingPong || BN == 128, "ping-pong: 128 x 128 tiles");
  static_assert(!kFusedTma || kTmaStore, "the fused TMA-store epilogue stores through tma_out");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int w = wg - 1;
  const auto [mtiles, ntiles, tiles, ktiles] = counts();
  if constexpr (kTmaStore) {
    if (tid == 0) asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tma_out)) : "memory");
  }
  // m64n128 accumulator blocks per thread: along N (cooperative) or the tile's two 64-row halves; BN = 64
  // (cooperative only) uses the first 32 registers of one block. kBoxes: the warpgroup's 64x64 output boxes.
  static_assert(BN != 64 || (!kPingPong && kTmaStore), "128 x 64 tiles: cooperative, TMA-store epilogues");
  constexpr int kAcc = kPingPong ? 2 : (BN == 64 ? 1 : BN / 128);
  // The boxed epilogue's bias is folded into the accumulators' start (whole m64n128 blocks: not at BN = 64).
  constexpr bool kFoldsBias = kFusedTma && BN != 64;
  constexpr int kBoxes = kPingPong ? 4 : BN / 64;
  float acc[kAcc][64];
  int stage = 0;
  uint32_t phase = 0;
  int mine = 0;  // ping-pong: this CTA's tile ordinal, whose parity names the warpgroup
  // The boxed epilogue's residual, loaded by TMA into the warpgroup's output boxes (StoreTileTmaFusedBoxed).
  // Not with split-K (split > 1 without kMulticast): a split's second rank runs no epilogue.
  const bool boxed = kFusedTma && (epi_flags & kWgmmaEpiBoxed) != 0 && (split == 1 || kMulticast);
  const int64_t stride = gridDim.x / split;  // tiles between this CTA's (multicast pairs: this cluster's)
  const bool boxed_res = boxed && p.residual != nullptr;
  // The boxed epilogue's bias is folded into the accumulators' start (ping-pong always, cooperative unless the lab's
  // kWgmmaCoopNoFold): decided once, since the start and the epilogue must agree (or the bias counts twice or not).
  const bool bias_folded =
      kFoldsBias && boxed && p.bias != nullptr && (kPingPong || (epi_flags & kWgmmaCoopNoFold) == 0);
  // The cooperative boxed epilogue without a residual, the bias folded into the accumulators or absent: the
  // activation on the accumulators in registers, then a plain matmul's unrolled box stores (StoreTileTma). The
  // loop form (StoreTileTmaFusedBoxed) selects each half box's registers at run time and loads the bias; with
  // both schedules' epilogue exposed here (no other warpgroup's mainloop runs under it), that cost ~5% at 4096^3.
  // H200 (bench/lab/s21_h200.md, calls 3-4, us loop / unrolled, jnp): + bias 188.7 / 179.8 (174.3), + bias gelu
  // 200.7 / 189.8 (226.3), + bias gelu_tanh 198.6 / 187.2 (200.6), f16 + bias 194.1 / 186.8 (176.9). With a
  // residual, or on ping-pong (whose epilogue runs under the other warpgroup's mainloop), an unrolled form of the
  // whole boxed epilogue tied or lost (+ residual 202.7 / 203.2; ping-pong pairs 3000^3 + bias gelu 112.5 / 120.0).
  const bool unrolled =
      !kPingPong && boxed && !boxed_res && (epi_flags & kWgmmaEpiLoop) == 0 && (p.bias == nullptr || bias_folded);
  // With a residual the unrolled form (StoreTileTmaBoxes, kRes) gained 0.4-2.8% where the tile runs alone and lost
  // 3.8% in pairs (bf16 4096x1000x4096 + bias gelu + residual 55.2 -> 57.3 us; bench/lab/s21_h200.md call 5): alone
  // only.
  const bool unrolled_res = !kPingPong && !kMulticast && boxed_res &&
                            (epi_flags & (kWgmmaEpiLoop | kWgmmaEpiResLoop)) == 0 && (p.bias == nullptr || bias_folded);
  uint32_t res_phase = 0;
#ifdef JK_WGMMA_TRACE
  int trace_n = 0;  // this warpgroup's tile ordinal (the lab timeline)
#endif
  const WgmmaKRange kr = kMulticast ? WgmmaKRange{0, ktiles} : WgmmaKRangeOf(ktiles, split);
  // kMulticast: a stage is released to both producers (the peer's multicast writes here too), by one lane
  // per warp once the warp's wgmma wait has returned (the wgmmas that read the stage are complete).
  const auto release = [&](int s) {
    if constexpr (kMulticast) {
      if (tid % 32 == 0) {
        MbarArrive(empty(s));
        MbarArriveRemote(MapaShared(empty(s), peer));
      }
    } else {
      MbarArrive(empty(s));
    }
  };
  for (int64_t t = blockIdx.x / split; t < tiles; t += stride) {
    if constexpr (kPingPong) {
      if ((mine & 1) != w) {  // the other warpgroup's tile: step over its k-tiles in the ring
        ++mine;
        stage += ktiles;
        phase ^= (stage / STAGES) & 1;
        stage %= STAGES;
        if constexpr (kFusedTma) {
          if (boxed && t + stride >= tiles) {
            // The CTA's last tile, the other warpgroup's: its epilogue would run with the tensor cores idle, so
            // this warpgroup takes the tile's lower 64 rows (boxes 2 and 3), handed over through the idle ring.
            const WgmmaTileCoord tc = tile_of(t, mtiles, ntiles);
            const BatchOffsets o = OffsetsOf(p, tc.z);
            const int32_t zres = static_cast<int32_t>(o.res / (p.m * p.n));
            if (boxed_res && tid == 0) {
              BulkWaitRead<0>();
#pragma unroll
              for (int h = 2; h < 4; ++h)
                LoadResidualBox<true>(&tma_res, epi + w * kWgmmaEpiGroup, resbar(w), h, tc.n0, tc.m0, zres);
            }
            NamedBarrier(6, 256);  // the owner's accumulators are in the ring
            const uint32_t slot = sa + tid * 16;
#pragma unroll
            for (int q = 0; q < 16; ++q) {
              const float4 v = *reinterpret_cast<const float4*>(smem_raw + (slot - smem_base) + q * 2048);
              acc[kAcc - 1][4 * q] = v.x, acc[kAcc - 1][4 * q + 1] = v.y, acc[kAcc - 1][4 * q + 2] = v.z,
                            acc[kAcc - 1][4 * q + 3] = v.w;
            }
            StoreTileTmaFusedBoxed<T, kAcc, kPingPong, kBoxes>(
                acc, epi + w * kWgmmaEpiGroup, &tma_out, boxed_res ? &tma_res : nullptr, resbar(w), res_phase,
                nullptr, p.activation, p.n, tc.n0, tc.m0, static_cast<int32_t>(tc.z), zres, w, tid, 2, 4);
          }
        }
        continue;
      }
      JK_WGMMA_STAMP(trace_n, 0);
      if (mine++ > 0) NamedBarrier(3 + w, 256);  // the other warpgroup has waited for its k-tiles
    }
    JK_WGMMA_STAMP(trace_n, 1);
    if constexpr (kFusedTma) {
      // The tile's first two residual boxes, into the output boxes once their last stores have read them; they
      // land during the mainloop (ping-pong: while this warpgroup still waits for the other's k-tiles).
      if (boxed_res && tid == 0) {
        BulkWaitRead<0>();
        const WgmmaTileCoord rc = tile_of(t, mtiles, ntiles);
        const int32_t zres = static_cast<int32_t>(OffsetsOf(p, rc.z).res / (p.m * p.n));
        const int64_t row0 = rc.m0 + (kPingPong ? 0 : 64 * w);
#pragma unroll
        for (int h = 0; h < (kBoxes < 2 ? kBoxes : 2); ++h)
          LoadResidualBox<kPingPong>(&tma_res, epi + w * kWgmmaEpiGroup, resbar(w), h, rc.n0, row0, zres);
        // The later boxes into L2, so their loads into the freed boxes do not wait for DRAM.
#pragma unroll
        for (int h = 2; h < kBoxes; ++h)
          TmaPrefetch3d(&tma_res, static_cast<int32_t>(BoxCol<kPingPong>(rc.n0, h)),
                        static_cast<int32_t>(BoxRow<kPingPong>(row0, h)), zres);
      }
    }
    if constexpr (!kTmaStore || kFusedTma) {
      if (epi_flags & kWgmmaPrefetchResidualL2) {
        const WgmmaTileCoord pc = tile_of(t, mtiles, ntiles);
#pragma unroll
        for (int i = 0; i < (kPingPong ? 2 : 1); ++i)  // ping-pong: both 64-row halves of the tile
          PrefetchResidualL2<T>(p, pc.z, pc.m0 + (kPingPong ? 64 * i : 64 * w), pc.n0, BN, tid);
      }
    }
    // Ping-pong with the boxed epilogue: the accumulators start from the bias (register 4q + {0..3} holds columns
    // 8q + 2t + {0, 1} of rows g and g + 8 of both 64-row halves), so the epilogue has no global loads left: its
    // length is exposed once per CTA, after the last tile, and every instruction it issues slows the other
    // warpgroup's mainloop (bench/lab/s17_h200.md). The loads land while this warpgroup waits for its k-tiles.
    // Cooperative tiles of 128 or 256 columns fold the bias the same way (block j: columns 128 j + 8q + 2t + {0, 1}).
    if constexpr (kFoldsBias) {
      // Straight-line definitions (predicated loads, no branch around them): with a branch, ptxas serialised the
      // wgmmas (C7515, accumulators defined by non-wgmma instructions inside the pipeline stage).
      const bool fold = bias_folded;
      const WgmmaTileCoord bc = tile_of(t, mtiles, ntiles);
      const T* bias = static_cast<const T*>(p.bias) + (fold ? OffsetsOf(p, bc.z).bias : 0);
      const int64_t c0 = bc.n0 + 2 * (tid % 4);
#pragma unroll
      for (int q = 0; q < 16; ++q) {
#pragma unroll
        for (int j = 0; j < kAcc; ++j) {
          if (kPingPong && j > 0) {  // ping-pong: both blocks are the tile's two 64-row halves, same columns
            acc[j][4 * q] = acc[0][4 * q], acc[j][4 * q + 1] = acc[0][4 * q + 1];
            acc[j][4 * q + 2] = acc[0][4 * q + 2], acc[j][4 * q + 3] = acc[0][4 * q + 3];
            continue;
          }
          const int64_t c = c0 + (kPingPong ? 0 : 128 * j) + 8 * q;
          float lo = 0.f, hi = 0.f;
          Epilogue<T>::AddPair(lo, hi, fold && c < p.n ? __ldg(reinterpret_cast<const unsigned int*>(bias + c)) : 0u);
          acc[j][4 * q] = lo, acc[j][4 * q + 1] = hi, acc[j][4 * q + 2] = lo, acc[j][4 * q + 3] = hi;
        }
      }
#pragma unroll
      for (int j = 0; j < kAcc; ++j)
#pragma unroll
        for (int r = 0; r < 64; ++r) FenceOperand(acc[j][r]);
    } else {
#pragma unroll
      for (int j = 0; j < kAcc; ++j)
#pragma unroll
        for (int r = 0; r < 64; ++r) {
          acc[j][r] = 0.f;
          FenceOperand(acc[j][r]);
        }
    }
    int prev = 0;
    for (int kt = kr.begin; kt < kr.end; ++kt) {
      MbarWait(full(stage), phase);
      WgmmaFence();
      const uint32_t a_base = sa + stage * C::kAStage + (kPingPong ? 0 : w * (64 * 128)), b_base = sb + stage * C::kBStage;
#pragma unroll
      for (int ks = 0; ks < kWgmmaBK / 16; ++ks) {
        // 16 k of A: 32 bytes along the swizzled 128-byte row; of B: 16 k-rows = two 1 KiB atoms.
        if constexpr (kPingPong) {
          const uint64_t db = SmemDesc(b_base + ks * 2048, C::kBPanel, 1024);
#pragma unroll
          for (int i = 0; i < kAcc; ++i) WgmmaM64N128K16<T>(acc[i], SmemDesc(a_base + i * (64 * 128) + ks * 32, 16, 1024), db);
        } else {
          const uint64_t da = SmemDesc(a_base + ks * 32, 16, 1024);
          if constexpr (BN == 64) {
            WgmmaM64N64K16<T>(acc[0], da, SmemDesc(b_base + ks * 2048, C::kBPanel, 1024));
          } else {
#pragma unroll
            for (int j = 0; j < kAcc; ++j)
              WgmmaM64N128K16<T>(acc[j], da, SmemDesc(b_base + j * 2 * C::kBPanel + ks * 2048, C::kBPanel, 1024));
          }
        }
      }
      WgmmaCommit();
      // Keep this k-tile's wgmmas in flight; the previous k-tile's have retired, so its stage is free.
      WgmmaWait<1>();
      if (kt > kr.begin) release(prev);
      prev = stage;
      if (++stage == STAGES) stage = 0, phase ^= 1;
    }
    JK_WGMMA_STAMP(trace_n, 2);
    if constexpr (kPingPong) {
      if (t + stride < tiles) NamedArrive(3 + (1 - w), 256);  // the next tile is the other warpgroup's
    }
    WgmmaWait<0>();
    JK_WGMMA_STAMP(trace_n, 3);
#pragma unroll
    for (int j = 0; j < kAcc; ++j)
#pragma unroll
      for (int r = 0; r < 64; ++r) FenceOperand(acc[j][r]);
    if (kr.end > kr.begin) release(prev);
    // Ping-pong's last tile with the boxed epilogue: the lower 64 rows go to the other warpgroup (see above).
    const bool hand_over = kPingPong && kFusedTma && boxed && t + stride >= tiles;
    if (hand_over) {
      const uint32_t slot = sa + tid * 16;
#pragma unroll
      for (int q = 0; q < 16; ++q)
        *reinterpret_cast<float4*>(smem_raw + (slot - smem_base) + q * 2048) =
            make_float4(acc[kAcc - 1][4 * q], acc[kAcc - 1][4 * q + 1], acc[kAcc - 1][4 * q + 2],
                        acc[kAcc - 1][4 * q + 3]);
      NamedArrive(6, 256);
    }
    if constexpr (!kPingPong) {
      // Split-K: rank 1 sends its partial sums into rank 0's ring (free once rank 0's consumers are past
      // their mainloop: each cluster has one tile, so no later k-tile lands there), rank 0 adds them and
      // runs the epilogue. Per (warpgroup, block j, 4 registers q): 128 threads x 16 bytes.
      if (!kMulticast && split > 1) {
        const uint32_t slot = sa + w * (kAcc * 16 * 2048) + tid * 16;
        if (blockIdx.x % split != 0) {
          MbarWaitCluster(xfree, 0);
          const uint32_t remote = MapaShared(slot, 0);
#pragma unroll
          for (int j = 0; j < kAcc; ++j)
#pragma unroll
            for (int q = 0; q < 16; ++q)
              StoreCluster4(remote + (j * 16 + q) * 2048, acc[j][4 * q], acc[j][4 * q + 1], acc[j][4 * q + 2],
                            acc[j][4 * q + 3]);
          MbarArriveCluster(MapaShared(xdata, 0));
          continue;
        }
        NamedBarrier(5, 256);  // both consumer warpgroups are past the ring
        if (threadIdx.x == 128) MbarArriveCluster(MapaShared(xfree, 1));
        MbarWaitCluster(xdata, 0);
#pragma unroll
        for (int j = 0; j < kAcc; ++j)
#pragma unroll
          for (int q = 0; q < 16; ++q) {
            const float4 v = *reinterpret_cast<const float4*>(smem_raw + (slot - smem_base) + (j * 16 + q) * 2048);
            acc[j][4 * q] += v.x, acc[j][4 * q + 1] += v.y, acc[j][4 * q + 2] += v.z, acc[j][4 * q + 3] += v.w;
          }
      }
    }

    // The tile's coordinates only now: nothing holds them in registers across the mainloop.
    const WgmmaTileCoord tc = tile_of(t, mtiles, ntiles);
    if constexpr (kFusedTma) {
      if (unrolled) {
#pragma unroll
        for (int j = 0; j < kAcc; ++j) ActivateVecAs(p.activation, acc[j], false);
        StoreTileTma<T, kAcc, kPingPong, kBoxes>(acc, epi + w * kWgmmaEpiGroup, &tma_out,
                                                 static_cast<int32_t>(tc.n0),
                                                 static_cast<int32_t>(tc.m0 + (kPingPong ? 0 : 64 * w)),
                                                 static_cast<int32_t>(tc.z), w, tid);
      } else if (unrolled_res) {
#pragma unroll
        for (int j = 0; j < kAcc; ++j) ActivateVecAs(p.activation, acc[j], false);
        StoreTileTmaBoxes<T, kAcc, kPingPong, kBoxes, true, int64_t>(
            acc, epi + w * kWgmmaEpiGroup, &tma_out, tc.n0, tc.m0 + 64 * w, static_cast<int32_t>(tc.z), w, tid, &tma_res,
            resbar(w), res_phase, static_cast<int32_t>(OffsetsOf(p, tc.z).res / (p.m * p.n)));
      } else if (boxed) {
        const BatchOffsets o = OffsetsOf(p, tc.z);
        StoreTileTmaFusedBoxed<T, kAcc, kPingPong, kBoxes>(
            acc, epi + w * kWgmmaEpiGroup, &tma_out, boxed_res ? &tma_res : nullptr, resbar(w), res_phase,
            p.bias && !bias_folded ? static_cast<const T*>(p.bias) + o.bias : nullptr,
            p.activation, p.n, tc.n0,
            tc.m0 + (kPingPong ? 0 : 64 * w), static_cast<int32_t>(tc.z),
            static_cast<int32_t>(o.res / (p.m * p.n)), w, tid, 0, hand_over ? 2 : kBoxes);
      } else {
        StoreTileTmaFused<T, kAcc, kPingPong, kBoxes>(acc, epi + w * kWgmmaEpiGroup, &tma_out,
                                                      Epilogue<T>(p, tc.z, OffsetsOf(p, tc.z)), tc.n0,
                                                      tc.m0 + (kPingPong ? 0 : 64 * w), static_cast<int32_t>(tc.z), w,
                                                      tid, (epi_flags & kWgmmaActLibm) != 0);
      }
    } else if constexpr (kTmaStore) {
      StoreTileTma<T, kAcc, kPingPong, kBoxes>(acc, epi + w * kWgmmaEpiGroup, &tma_out, static_cast<int32_t>(tc.n0),
                                       static_cast<int32_t>(tc.m0 + (kPingPong ? 0 : 64 * w)),
                                       static_cast<int32_t>(tc.z), w, tid);
#ifdef JK_WGMMA_TRACE
      if (jk_lab_mode == 1) {
        const long long t0 = clock64();
        while (clock64() - t0 < jk_lab_n) __nanosleep(256);
      } else if (jk_lab_mode == 2) {
        float c[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) c[i] = acc[0][i];
        for (int it = 0; it < jk_lab_n / 8; ++it)
#pragma unroll
          for (int i = 0; i < 8; ++i) c[i] = fmaf(c[i], 1.0001f, 0.25f);
        float sum = 0.f;
#pragma unroll
        for (int i = 0; i < 8; ++i) sum += c[i];
        if (sum == 1234.5f) jk_lab_sink = sum;
      }
#endif
    } else {
      const BatchOffsets o = OffsetsOf(p, tc.z);
      StoreTileFused<T, kAcc, kPingPong>(acc, Epilogue<T>(p, tc.z, o),
                                         reinterpret_cast<float*>(smem_raw + (epi - smem_base) + w * kWgmmaEpiGroup),
                                         tc.m0 + (kPingPong ? 0 : 64 * w), tc.n0, tid,
                                         (epi_flags & kWgmmaPrefetchInputs) != 0, (epi_flags & kWgmmaActLibm) != 0);
    }
    JK_WGMMA_STAMP(trace_n, 4);
#ifdef JK_WGMMA_TRACE
    ++trace_n;
#endif
  }
  // The shared memory must outlive the last stores' reads of it.
  if constexpr (kTmaStore) {
    if (tid == 0) BulkWaitAll();
  }
  // kMulticast: the peer's consumers arrive on this CTA's barriers until their last k-tile.
  if constexpr (kMulticast) ClusterBarrier();
#endif  // JK_WGMMA_DEVICE
}

}  // namespace jk::mm
