// SkinnyPipe: bf16/f16 decode shapes (M <= 16) as a bandwidth problem: every CTA streams its own K-slice x
// N-slice of b through a cp.async shared-memory ring in whole row segments, and tensor cores do the math.
//
// Why: SkinnyMma (matmul_skinny_mma.cuh) loads mma fragments straight from global memory, which ties 8
// lanes to a row: one warp load = 4 rows x 128 bytes, 8 KiB apart, and a warp waits on each round of loads
// (H200 8x4096x4096: 19.4 us, 1.7 TB/s, against XLA's 7.4 us). Here a warp's 16-byte copies cover
// CW * 2 contiguous bytes of each row (32 warp lanes x 16 bytes = 512 bytes per instruction) and the ring
// keeps kStages - 1 stages (~16 KiB each) in flight while the oldest is consumed.
//
// Math: out^T = b^T a^T on mma.sync m16n8k16: the 16 mma rows are 16 columns of b (A fragments by
// ldmatrix.trans from the row-major stage), the 8 mma columns are 8 rows of a (B fragments by ldmatrix from
// a's row-major stage), so M = 8 pads nothing; M <= 16 takes two 8-row groups (MG = 2). float32
// accumulation.
//
// Split: a CTA owns CW columns and one rank's K range; its 8 warps split the stage's (column tile, k step)
// work, partials meet in shared memory (warps) and then through distributed shared memory across the
// cluster's ranks (sm_90), summed in a fixed order: deterministic, no scratch buffer, no atomics.
//
// Requires (the launcher checks): K % 8 == 0, N % 8 == 0, a and b 16-byte aligned in every batch matrix.
//
// Since session 24 the problems whose K splits into >= 2 ranks go to SplitPipe by default (matmul_decode_split.cuh: the
// same stream and math in XLA's cluster-free split-K geometry, with a workspace and a sum kernel); SkinnyPipe keeps the
// rest, and all of them where the lowering gave no workspace or JK_MATMUL_DECODE=cluster.
//
// Two ways to fill b's stages (kTma): every thread's 16-byte cp.async copies (the default; each thread's copy
// addresses computed once, outside the ring: written per copy, ptxas emitted ~330 instructions per stage refill, and
// hoisting them took bf16 8x4096x4096 from 11.1 to 9.9 us on an H200), or one bulk tensor copy (TMA) per stage
// issued by thread 0 (JK_MATMUL_PIPE_TMA=1; it beat the padded cp.async stages of before where b streamed from
// DRAM, and loses to the swizzled ones everywhere measured).
//
// b's stage layout: dense rows of CW columns, 16-byte chunk c of k-row r stored at chunk c ^ (r % 8) (the TMA
// form's 128-byte swizzle, extended to wider rows), so the 8 rows of an ldmatrix fragment fall in distinct banks.
// Rows padded by 16 bytes instead (the layout before session 23) are just as free of bank conflicts for ldmatrix,
// but the copies then land off the 128-byte lines of shared memory: in XLA's decode geometry the same ring streamed
// b at 8.7 us padded against 6.7 swizzled (XLA's Triton kernel 6.8; H200, bf16 8x4096x4096, one-pass Nsight
// Compute), and here bf16 8x4096x4096 went 10.1 -> 8.6 us (CUPTI, jnp 7.6; bench/lab/s23_h200.md calls 10-11).
#pragma once
#include <cuda.h>  // CUtensorMap

#include <cstdint>

#include "common/bulk_copy.cuh"  // BarrierInit, BarrierWait, FenceProxyAsync, MbarExpectTx, SmemAddress, TmaLoad3d
#include "common/device.cuh"
#include "matmul/matmul_epilogue.cuh"
#include "matmul/matmul_skinny_mma.cuh"  // LoadClusterShared, SkinnyMmaOp

namespace jk::mm {

constexpr int kPipeWarps = 8;
constexpr int kPipeThreads = 32 * kPipeWarps;
constexpr int kPipeStages = 4;  // default ring depth (8 for the lab: JK_MATMUL_PIPE_STAGES=8)

// Stage geometry for CW columns and MG groups of 8 rows of a: ~16 KiB of b per stage (KS = 8192 / CW k rows) in
// dense swizzled rows, a's rows padded by 16 bytes so the 8 row addresses of an ldmatrix fall in distinct banks.
template <int CW, int MG, int kStages = kPipeStages>
struct PipeShape {
  static constexpr int kKs = 8192 / CW;             // k rows per stage
  static constexpr int kARow = kKs + 8;             // elements per padded row of a's stage
  static constexpr int kColTiles = CW / 16;
  static constexpr int kKSteps = kKs / 16;
  static constexpr int kWarpCols = kColTiles < kPipeWarps ? kColTiles : kPipeWarps;  // warps across columns
  static constexpr int kKGroups = kPipeWarps / kWarpCols;                          // warps across k
  static constexpr int kTilesPerWarp = kColTiles / kWarpCols;
  static constexpr int kStepsPerWarp = kKSteps / kKGroups;
  static constexpr int kRedFloats = (kKGroups + 1) * 8 * MG * CW;  // per-k-group partials + the CTA's sum
  // Dense b slots of kKs x CW columns (the swizzled layout) on 1024-byte boundaries, then the padded a slots, then one
  // mbarrier per slot (the TMA form's); 1024 bytes of alignment slack. The reduction reuses the ring.
  static constexpr int kBSlot = kKs * CW * 2;
  static constexpr int kASlot = 8 * MG * kARow * 2;
  static constexpr int kBars = kStages * kBSlot + kStages * kASlot;  // byte offset of the mbarriers
  static constexpr int kSmemBytes =
      1024 + (kBars + 8 * kStages > kRedFloats * 4 ? kBars + 8 * kStages : kRedFloats * 4);
  static_assert(kStepsPerWarp >= 1 && kKSteps % kKGroups == 0, "every warp has a k step");
};

namespace pipe {
__device__ __forceinline__ void Copy16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void Commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void Wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
__device__ __forceinline__ void LdTrans4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void Ld2(uint32_t& r0, uint32_t& r1, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n" : "=r"(r0), "=r"(r1) : "r"(addr));
}

// The ring both decode kernels run over a rank's `ntiles` tiles: load(tile, slot) copies a tile into a ring slot,
// landed(slot) waits for what cp.async groups do not cover (the TMA form's mbarrier), compute(slot) consumes it.
// Groups are committed even when empty, so "all but the newest kStages - 2 complete" always means "tile i has
// landed". Ends with every copy landed and every slot read (the slots may be reused at once).
template <int kStages, typename Load, typename Landed, typename Compute>
__device__ __forceinline__ void RunRing(int64_t ntiles, Load&& load, Landed&& landed, Compute&& compute) {
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ntiles) load(s, s);
    Commit();
  }
  for (int64_t i = 0; i < ntiles; ++i) {
    Wait<kStages - 2>();
    landed(static_cast<int>(i % kStages));
    __syncthreads();  // tile i visible to every warp; the slot refilled below was consumed at i - 1
    const int64_t next = i + kStages - 1;
    if (next < ntiles) load(next, static_cast<int>(next % kStages));
    Commit();
    compute(static_cast<int>(i % kStages));
  }
  Wait<0>();
  __syncthreads();
}

// One 16-deep k step of a stage, both decode kernels' math: the B fragments of a (ldmatrix of a's padded rows:
// a_frag is this lane's row address at k = 0, kARow elements a row) for MG groups of 8 rows, then for each of the
// warp's kTiles column tiles (first column col_of(j)) the A fragment of b's swizzled rows (kBRowBytes a row, 16-byte
// chunk c of row r at c ^ (r % 8)) by ldmatrix.trans, and the mma. Lane: b row kk + 8 (q >> 1) + r8, chunk
// col / 8 + (q & 1) (q = lane / 8, r8 = lane % 8, the row's position in its 8-row group).
template <typename T, int MG, int kTiles, int kARow, uint32_t kBRowBytes, typename ColOf>
__device__ __forceinline__ void SwizzledStep(float (&acc)[kTiles][MG][4], uint32_t a_frag, uint32_t sb, int kk, int q,
                                             int r8, ColOf&& col_of) {
  uint32_t fb[MG][2];
#pragma unroll
  for (int mg = 0; mg < MG; ++mg) Ld2(fb[mg][0], fb[mg][1], a_frag + static_cast<uint32_t>((8 * mg * kARow + kk) * 2));
#pragma unroll
  for (int j = 0; j < kTiles; ++j) {
    const uint32_t row = static_cast<uint32_t>(kk + 8 * (q >> 1) + r8);
    const uint32_t chunk = static_cast<uint32_t>((col_of(j) / 8 + (q & 1)) ^ r8);
    uint32_t fa[4];
    LdTrans4(fa, sb + row * kBRowBytes + chunk * 16u);
#pragma unroll
    for (int mg = 0; mg < MG; ++mg) SkinnyMmaOp<T>(acc[j][mg], fa, fb[mg][0], fb[mg][1]);
  }
}
}  // namespace pipe

// Grid: x = column blocks x cluster (cluster dims (cluster, 1, 1)), z = batch. k_rank: the K extent of a
// rank, a multiple of the stage depth; cluster * k_rank >= K.
// kTma (CW = 64 only): b's stages come from the bulk tensor copy engine (one 128-row x 64-column box per stage,
// issued by thread 0, completing on the slot's mbarrier; 128-byte swizzle, so the ldmatrix rows of a fragment
// fall in distinct banks); a's stay per-thread cp.async copies. tma_b: a 3-d map (N, K, matrices) over b, box
// (64, kKs, 1); unused without kTma.
template <typename T, int CW, int MG, int kStages = kPipeStages, bool kTma = false>
__global__ void __launch_bounds__(kPipeThreads)
    SkinnyPipeKernel(const __grid_constant__ CUtensorMap tma_b, MatmulProblem p, int cluster, int64_t k_rank) {
  using S = PipeShape<CW, MG, kStages>;
  static_assert(!kTma || CW == 64, "the TMA form takes rows of 128 bytes (the 128-byte swizzle)");
  constexpr int kBRowBytes = CW * 2;  // a k-row of a b stage
  extern __shared__ __align__(16) uint16_t pipe_smem[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int rank = static_cast<int>(blockIdx.x) % cluster;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x / cluster) * CW;
  const int64_t kbeg = rank * k_rank;
  const int64_t kend = kbeg + k_rank < p.k ? kbeg + k_rank : p.k;
  const int64_t ntiles = kend > kbeg ? (kend - kbeg + S::kKs - 1) / S::kKs : 0;
  const uint32_t base = SmemAddress(pipe_smem);
  // b slots from tb (1024-byte aligned), a slots from ta, one mbarrier per slot from bars (the TMA form's).
  const uint32_t tb = (base + 1023u) & ~1023u;
  const uint32_t ta = tb + kStages * S::kBSlot;
  uint64_t* const bars = reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(pipe_smem) +
                                                     (ta + kStages * S::kASlot - base));
  if constexpr (kTma) {
    if (threadIdx.x == 0) {
      for (int s = 0; s < kStages; ++s) BarrierInit(bars + s);
      BarrierInitFence();
    }
    __syncthreads();
  }
  uint32_t phases = 0;  // TMA form: bit s = the parity slot s's mbarrier completes next
  // This warp's share of a stage: column tiles wc + kWarpCols * j, k steps kg * kStepsPerWarp + s.
  const int wc = warp % S::kWarpCols, kg = warp / S::kWarpCols;
  // ldmatrix row addresses (bytes from a stage's start). A (b^T): matrix q = lane / 8 covers columns
  // +8 * (q & 1) and k rows +8 * (q >> 1) (fragment order a0a1, a2a3, a4a5, a6a7); B (a^T): matrix
  // lane / 8 % 2 covers k +8 * that, row lane % 8 of the group.
  const int q = lane / 8, r8 = lane % 8;
  const uint32_t b_frag_off = static_cast<uint32_t>((r8 * S::kARow + 8 * (q & 1)) * 2);  // in an a slot

  // This thread's copies of every stage, fixed across stages: b chunks (rows br0 + j * kBRowsPerRound, column
  // chunk bc8; kBRounds of them) and at most one chunk of a (row ar, k chunk ac8). Hoisting them keeps the
  // ring's refill at a few instructions per copy: with the index math written per copy, ptxas emitted ~330
  // instructions per stage for 4 + 1 copies, against ~20 for the stage's math (sm_90a SASS, session 15).
  constexpr int kChunksPerRow = CW / 8;
  constexpr int kBRowsPerRound = kPipeThreads / kChunksPerRow;
  constexpr int kBRounds = S::kKs / kBRowsPerRound;  // 4
  constexpr int kAChunks = MG * S::kKs;              // 8 * MG rows x kKs / 8 chunks, at most one per thread
  static_assert(kBRounds * kPipeThreads * 8 == S::kKs * CW && kAChunks <= kPipeThreads, "whole rounds of copies");
  const int br0 = threadIdx.x / kChunksPerRow, bc8 = threadIdx.x % kChunksPerRow;
  const bool b_col_ok = n0 + 8 * bc8 < p.n;
  // A thread's rows br0 + j kBRowsPerRound all keep br0 % 8 (kBRowsPerRound is a multiple of 8), so its chunk's
  // swizzled position is fixed; c ^ (r % 8) stays inside the row's aligned group of 8 chunks.
  static_assert(kBRowsPerRound % 8 == 0 && kChunksPerRow % 8 == 0, "a fixed swizzle per thread, whole chunk groups");
  const uint32_t b_dst = static_cast<uint32_t>(br0 * kBRowBytes + 16 * (bc8 ^ (br0 % 8)));
  constexpr uint32_t kBRoundBytes = kBRowsPerRound * kBRowBytes;
  const bool a_has = static_cast<int>(threadIdx.x) < kAChunks;
  const int ar = threadIdx.x / (S::kKs / 8), ac8 = threadIdx.x % (S::kKs / 8);
  const bool a_row_ok = a_has && ar < p.m;
  const uint32_t a_dst = static_cast<uint32_t>((ar * S::kARow + 8 * ac8) * 2);
  const int64_t b_round = int64_t{kBRowsPerRound} * p.n;  // elements between a thread's b chunks

  for (int64_t z = blockIdx.z; z < p.batch_count; z += gridDim.z) {
    const BatchOffsets o = OffsetsOf(p, z);
    const uint16_t* a = static_cast<const uint16_t*>(p.a) + o.a;
    const uint16_t* b = static_cast<const uint16_t*>(p.b) + o.b;
    // Element offsets of this thread's first chunks at k = kbeg (used only where the chunk is in range).
    const int64_t b_off = (kbeg + br0) * p.n + n0 + 8 * bc8;
    const int64_t a_off = ar * p.k + kbeg + 8 * ac8;
    // Stage `tile` of this rank into ring slot `slot`; zeros outside [kbeg, kend) x [0, N) and past M (a
    // zero row of a times a finite-or-not row of b must not count, so both sides are zero-filled).
    auto load = [&](int64_t tile, int slot) {
      const int64_t k0 = kbeg + tile * S::kKs;
      const uint32_t sb = tb + static_cast<uint32_t>(slot * S::kBSlot);
      const uint32_t sa = ta + static_cast<uint32_t>(slot * S::kASlot);
      if constexpr (kTma) {
        if (threadIdx.x == 0) {
          // The slot was last read by ldmatrix (generic proxy) before the barrier this thread passed.
          FenceProxyAsync();
          const uint32_t bar = SmemAddress(bars + slot);
          MbarExpectTx(bar, S::kBSlot);
          // Rows past K read as zeros; k_rank is a multiple of kKs, so a box never crosses into the next rank.
          TmaLoad3d(sb, &tma_b, static_cast<int32_t>(n0), static_cast<int32_t>(k0),
                    static_cast<int32_t>(o.b / (p.k * p.n)), bar);
        }
        if (a_has) {
          const bool ok = a_row_ok && k0 + 8 * ac8 < kend;
          pipe::Copy16(sa + a_dst, ok ? a + a_off + tile * S::kKs : a, ok);
        }
        return;
      }
      const uint16_t* bt = b + b_off + tile * S::kKs * p.n;
      if (k0 + S::kKs <= kend) {  // every row of the stage in range: only the column test
#pragma unroll
        for (int j = 0; j < kBRounds; ++j)
          pipe::Copy16(sb + b_dst + j * kBRoundBytes, b_col_ok ? bt + j * b_round : b, b_col_ok);
      } else {
#pragma unroll
        for (int j = 0; j < kBRounds; ++j) {
          const bool ok = b_col_ok && k0 + br0 + j * kBRowsPerRound < kend;
          pipe::Copy16(sb + b_dst + j * kBRoundBytes, ok ? bt + j * b_round : b, ok);
        }
      }
      if (a_has) {
        const bool ok = a_row_ok && k0 + 8 * ac8 < kend;
        pipe::Copy16(sa + a_dst, ok ? a + a_off + tile * S::kKs : a, ok);
      }
    };
    float acc[S::kTilesPerWarp][MG][4] = {};
    auto compute = [&](int slot) {
      const uint32_t sb = tb + static_cast<uint32_t>(slot * S::kBSlot);
      const uint32_t sa = ta + static_cast<uint32_t>(slot * S::kASlot) + b_frag_off;
#pragma unroll
      for (int s = 0; s < S::kStepsPerWarp; ++s)
        pipe::SwizzledStep<T, MG, S::kTilesPerWarp, S::kARow, kBRowBytes>(
            acc, sa, sb, (kg * S::kStepsPerWarp + s) * 16, q, r8, [&](int j) { return (wc + S::kWarpCols * j) * 16; });
    };
    pipe::RunRing<kStages>(ntiles, load, [&](int slot) {
      if constexpr (kTma) {  // b's box of this tile has landed
        BarrierWait(bars + slot, (phases >> slot) & 1u);
        phases ^= 1u << slot;
      }
    }, compute);  // the ring then becomes the reduction buffer

    // Warp partials -> part[kg][row][col]; then the CTA's sum -> red[row][col] (read by the other ranks).
    float* part = reinterpret_cast<float*>(pipe_smem);
    float* red = part + S::kKGroups * 8 * MG * CW;
    // acc[j][mg] = out^T rows (col + g, col + g + 8) x columns (2t, 2t + 1) of row group mg.
#pragma unroll
    for (int j = 0; j < S::kTilesPerWarp; ++j) {
      const int col = (wc + S::kWarpCols * j) * 16 + g;
#pragma unroll
      for (int mg = 0; mg < MG; ++mg) {
        float* dst = part + (kg * 8 * MG + 8 * mg + 2 * t) * CW + col;
        dst[0] = acc[j][mg][0];
        dst[CW] = acc[j][mg][1];
        dst[8] = acc[j][mg][2];
        dst[CW + 8] = acc[j][mg][3];
      }
    }
    __syncthreads();
    for (int e = threadIdx.x; e < 8 * MG * CW; e += kPipeThreads) {
      float s = 0.f;
#pragma unroll
      for (int w = 0; w < S::kKGroups; ++w) s += part[w * 8 * MG * CW + e];
      red[e] = s;
    }
    if (cluster > 1) ClusterBarrier();  // every rank's red[] is complete
    else __syncthreads();
    const Epilogue<T> ep(p, z, o);
    const int rows = p.m < 8 * MG ? static_cast<int>(p.m) : 8 * MG;
    const int share = (rows * CW + cluster - 1) / cluster;
    const int e1 = (rank + 1) * share < rows * CW ? (rank + 1) * share : rows * CW;
    for (int e = rank * share + threadIdx.x; e < e1; e += kPipeThreads) {
      float s = 0.f;
      if (cluster > 1) {
        for (int r = 0; r < cluster; ++r) s += LoadClusterShared(&red[e], static_cast<uint32_t>(r));
      } else {
        s = red[e];
      }
      ep.Store(e / CW, n0 + e % CW, s);
    }
    // red[] stays alive until every rank has read it, and the next batch index's ring overwrites it.
    if (cluster > 1) ClusterBarrier();
    else __syncthreads();
  }
}

}  // namespace jk::mm
