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

namespace jk::mm {

constexpr int kWgmmaBM = 128, kWgmmaBK = 64, kWgmmaThreads = 384;
// Fused-epilogue staging, per consumer warp: 16 rows x 32 float32 columns, rows padded by 4 floats so the
// fragment writes and the 16-byte row reads spread over the banks.
constexpr int kWgmmaEpiRow = 32 + 4;
constexpr int kWgmmaEpiWarp = 16 * kWgmmaEpiRow * 4;
// TMA-store epilogue: a 64-row x 64-column box of 16-bit outputs (128-byte rows, 1 KiB swizzle atoms).
constexpr int kWgmmaOutBox = 64 * 64 * 2;
// Each consumer warpgroup's epilogue area: two output boxes, or its 4 warps' float32 staging.
constexpr int kWgmmaEpiGroup = 2 * kWgmmaOutBox;
static_assert(4 * kWgmmaEpiWarp <= kWgmmaEpiGroup, "the staging fits the warpgroup's epilogue area");

// Fused-epilogue options (the kernel's epi_flags): load the bias and residual of the next 32-column chunk
// while computing this one; prefetch a tile's residual into L2 before its mainloop; the activations' libm
// forms (ActivateLibm, matmul_epilogue.cuh; for the lab).
constexpr int kWgmmaPrefetchInputs = 1, kWgmmaPrefetchResidualL2 = 2, kWgmmaActLibm = 4;
// The fused TMA-store epilogue's lean form (StoreTileTmaFusedBoxed), set by the launcher where it applies: bias
// pairs 4-byte aligned (no per-load alignment branch) and the residual, if any, loaded by TMA into the output
// boxes (tma_res: the residual's matrices in the output's layout).
constexpr int kWgmmaEpiBoxed = 8;
// The cooperative schedule's boxed epilogue with the bias in the epilogue, not folded into the accumulators
// (JK_MATMUL_WGMMA_COOP_FOLD=0; for the lab).
constexpr int kWgmmaCoopNoFold = 16;
// The cooperative schedule's boxed epilogue in its loop form even without a residual (JK_MATMUL_WGMMA_EPI_UNROLL=0;
// for the lab and tests): see the kernel's `unrolled`.
constexpr int kWgmmaEpiLoop = 32;
// The residual's loop form where its unrolled form would run (JK_MATMUL_WGMMA_EPI_UNROLL=1; for the lab and tests).
constexpr int kWgmmaEpiResLoop = 64;

// Lab timeline (bench/lab/s17_pp_trace.cu defines JK_WGMMA_TRACE; compiled out otherwise): per CTA, consumer
// warpgroup and tile ordinal, clock64 at 5 points of the tile (before the ping-pong order barrier, mainloop
// start, last k-tile issued, accumulators complete, epilogue done).
#ifdef JK_WGMMA_TRACE
constexpr int kTraceCtas = 160, kTraceTiles = 24, kTracePoints = 5;
__device__ long long jk_wgmma_trace[kTraceCtas][2][kTraceTiles][kTracePoints];
// Lab probes after the plain TMA-store epilogue: mode 1 sleeps jk_lab_n cycles (__nanosleep), mode 2 issues
// jk_lab_n FFMAs in 8 independent chains (no memory traffic); mode 3: the boxed epilogue loads the residual
// boxes but does not read or add them.
__device__ int jk_lab_mode = 0, jk_lab_n = 0;
__device__ float jk_lab_sink;
#define JK_WGMMA_STAMP(n, point)                                                                 \
  do {                                                                                           \
    if (tid == 0 && blockIdx.x < kTraceCtas && (n) < kTraceTiles)                                \
      jk_wgmma_trace[blockIdx.x][w][(n)][(point)] = clock64();                                   \
  } while (0)
#else
#define JK_WGMMA_STAMP(n, point) \
  do {                           \
  } while (0)
#endif

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

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define JK_WGMMA_DEVICE 1

__device__ __forceinline__ void MbarInit(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void MbarArrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void MbarWait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  }
}

// MbarExpectTx and TmaLoad3d (one box of a 3-d tensor map): common/bulk_copy.cuh.

// One TMA box into the same shared-memory offset of every CTA in `mask` (cluster ranks), each completing on
// its own mbarrier at offset `bar`.
__device__ __forceinline__ void TmaLoad3dMulticast(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1,
                                                   int32_t c2, uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3, %4}], [%5], %6;\n"
      ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask) : "memory");
}

// Shared -> global TMA store of one box (elements outside the tensor are not written), in the issuing
// thread's current bulk group.
__device__ __forceinline__ void TmaStore3d(const CUtensorMap* map, uint32_t src, int32_t c0, int32_t c1, int32_t c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(src), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
// L2 prefetch of one box of a 3-d tensor map (no shared memory, no completion to wait for).
__device__ __forceinline__ void TmaPrefetch3d(const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2) {
  asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];\n"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
__device__ __forceinline__ void BulkCommit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// At most N of the issuing thread's bulk groups still read shared memory.
template <int N>
__device__ __forceinline__ void BulkWaitRead() { asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory"); }
// Before writing an output box: its previous store has read it. Boxes alternate between two buffers, so
// that store is the one before last, unless a warpgroup has one box a tile (128x64 tiles): then the last.
template <int kBoxes>
__device__ __forceinline__ void BulkWaitReadBox() {
  if constexpr (kBoxes == 1) BulkWaitRead<0>();
  else BulkWaitRead<1>();
}
__device__ __forceinline__ void BulkWaitAll() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Barrier over `count` threads on hardware barrier `id` (0 is __syncthreads').
__device__ __forceinline__ void NamedBarrier(uint32_t id, uint32_t count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void NamedArrive(uint32_t id, uint32_t count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
// Split-K exchange between the two CTAs of a cluster (distributed shared memory, sm_90).
__device__ __forceinline__ uint32_t MapaShared(uint32_t addr, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
  return remote;
}
__device__ __forceinline__ void StoreCluster4(uint32_t addr, float a, float b, float c, float d) {
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "f"(a), "f"(b), "f"(c), "f"(d)
               : "memory");
}
// Arrival on an mbarrier of another CTA of the cluster, ordering this thread's earlier writes before it.
__device__ __forceinline__ void MbarArriveCluster(uint32_t remote_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(remote_bar) : "memory");
}
// Arrival on an mbarrier of another CTA of the cluster with the default (CTA-scope release) semantics: for the
// multicast pairs' stage releases, which order only this CTA's completed wgmma reads before the arrival.
__device__ __forceinline__ void MbarArriveRemote(uint32_t remote_bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote_bar) : "memory");
}
__device__ __forceinline__ void MbarWaitCluster(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  }
}
__device__ __forceinline__ void StoreShared32(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
template <typename T>
__device__ __forceinline__ uint32_t PackPair(float lo, float hi) {  // lo at the lower address
  uint32_t w;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    memcpy(&w, &v, 4);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    memcpy(&w, &v, 4);
  }
  return w;
}

// wgmma shared-memory matrix descriptor with the 128-byte swizzle (layout type 1 in bits 62-63).
__device__ __forceinline__ uint64_t SmemDesc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(lbo >> 4) << 16) |
         (static_cast<uint64_t>(sbo >> 4) << 32) | (uint64_t{1} << 62);
}

__device__ __forceinline__ void WgmmaFence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void WgmmaCommit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void WgmmaWait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
// Keeps the compiler from moving accumulator reads/writes across the asynchronous wgmma window.
__device__ __forceinline__ void FenceOperand(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// D (64 x 128, float32, 64 registers a thread) += A (64 x 16, K-major) * B (16 x 128, N-major).
#define JK_WGMMA_M64N128K16(TYPES)                                                                         \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                                \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPES " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, 1;\n}\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
                 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
                 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
                 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
                 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
                 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
                 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
               : "l"(desc_a), "l"(desc_b), "r"(1))
template <typename T>
__device__ __forceinline__ void WgmmaM64N128K16(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    JK_WGMMA_M64N128K16("bf16.bf16");
  } else {
    JK_WGMMA_M64N128K16("f16.f16");
  }
}
#undef JK_WGMMA_M64N128K16

// D (64 x 64, float32, the first 32 of the block's registers, in the m64n128 layout's order) += A * B (16 x 64).
#define JK_WGMMA_M64N64K16(TYPES)                                                                          \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                                \
               "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPES " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 1;\n}\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
                 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
                 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
               : "l"(desc_a), "l"(desc_b), "r"(1))
template <typename T>
__device__ __forceinline__ void WgmmaM64N64K16(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    JK_WGMMA_M64N64K16("bf16.bf16");
  } else {
    JK_WGMMA_M64N64K16("f16.f16");
  }
}
#undef JK_WGMMA_M64N64K16

// Writes 32-column chunk C of a warp's 16 accumulator rows (columns 32C..32C+31 of the tile) to its
// staging area; the chunk is picked at run time but every register index is a constant, so the
// accumulators stay in registers while the epilogue below exists once instead of once per chunk.
template <int C, int kChunks, int kN128>
__device__ __forceinline__ void StageChunk(int c, float* st, const float (&acc)[kN128][64], int g, int t) {
  if (c == C) {
    constexpr int j = C / 4, qb = (C % 4) * 4;
#pragma unroll
    for (int qq = 0; qq < 4; ++qq) {
      constexpr int kRow = kWgmmaEpiRow;
      *reinterpret_cast<float2*>(st + g * kRow + 8 * qq + 2 * t) = make_float2(acc[j][4 * (qb + qq)], acc[j][4 * (qb + qq) + 1]);
      *reinterpret_cast<float2*>(st + (g + 8) * kRow + 8 * qq + 2 * t) =
          make_float2(acc[j][4 * (qb + qq) + 2], acc[j][4 * (qb + qq) + 3]);
    }
  } else if constexpr (C + 1 < kChunks) {
    StageChunk<C + 1, kChunks, kN128>(c, st, acc, g, t);
  }
}

// The fused epilogue of one consumer warpgroup, 32 columns at a time through each warp's staging area
// (`stage`: the warpgroup's 4 of them): fragment register 4q+{0,1} holds row g, columns 8q + 2t + {0,1}
// of the warp's 16-row slice, 4q+{2,3} row g+8; read back as 8-column row pieces, the epilogue runs once
// per 8 outputs and stores 16 bytes at a time. The bias and residual of chunk c + 1 are loaded while chunk
// c is computed (kPrefetchInputs), so their latency is not paid once per chunk. Each acc[j] is a 64 x 128
// block, side by side along N (kAlongM false: the cooperative schedule's 64 rows x BN) or stacked along M
// (kAlongM: the ping-pong schedule's 128 x 128); chunk c is columns 32(c % 4).. of block c / 4 either way.
template <typename T, int kN128, bool kAlongM = false>
__device__ __forceinline__ void StoreTileFused(const float (&acc)[kN128][64], const Epilogue<T>& ep, float* stage,
                                               int64_t row0, int64_t col0, int tid, bool prefetch_inputs,
                                               bool act_libm) {
  using In = typename Epilogue<T>::Row8Inputs;
  const int lane = tid % 32, g = lane / 4, quad = lane % 4;
  float* st = stage + (tid / 32) * (kWgmmaEpiWarp / 4);
  row0 += 16 * (tid / 32);
  constexpr int kChunks = kN128 * 4;
  // The chunk's first row and column in the output.
  const auto chunk_row = [&](int c) { return kAlongM ? row0 + 64 * (c / 4) : row0; };
  const auto chunk_col = [&](int c) { return kAlongM ? col0 + 32 * (c % 4) : col0 + 32 * c; };
  // Lane's two row pieces of a chunk: rows r0 and r0 + 8, columns cv .. cv + 7 of the chunk.
  const int r0 = lane / 4, cv = (lane % 4) * 8;
  In cur0{}, cur1{};
  if (prefetch_inputs) {
    cur0 = ep.LoadRow8(row0 + r0, col0 + cv);
    cur1 = ep.LoadRow8(row0 + r0 + 8, col0 + cv);
  }
#pragma unroll 1
  for (int c = 0; c < kChunks; ++c) {
    In next0{}, next1{};
    if (prefetch_inputs && c + 1 < kChunks) {
      next0 = ep.LoadRow8(chunk_row(c + 1) + r0, chunk_col(c + 1) + cv);
      next1 = ep.LoadRow8(chunk_row(c + 1) + r0 + 8, chunk_col(c + 1) + cv);
    }
    StageChunk<0, kChunks, kN128>(c, st, acc, g, quad);
    __syncwarp();
#pragma unroll 1
    for (int e = 0; e < 2; ++e) {
      const int r = r0 + 8 * e;
      float v[8];
      const float4 lo = *reinterpret_cast<const float4*>(st + r * kWgmmaEpiRow + cv);
      const float4 hi = *reinterpret_cast<const float4*>(st + r * kWgmmaEpiRow + cv + 4);
      v[0] = lo.x, v[1] = lo.y, v[2] = lo.z, v[3] = lo.w, v[4] = hi.x, v[5] = hi.y, v[6] = hi.z, v[7] = hi.w;
      if (prefetch_inputs) {
        // Field by field: a conditional between the two structs would take their addresses (local memory).
        In in;
        in.bias = e == 0 ? cur0.bias : cur1.bias;
        in.res = e == 0 ? cur0.res : cur1.res;
        ep.StoreRow8(chunk_row(c) + r, chunk_col(c) + cv, v, in, act_libm);
      } else {
        ep.StoreRow8(chunk_row(c) + r, chunk_col(c) + cv, v, ep.LoadRow8(chunk_row(c) + r, chunk_col(c) + cv),
                     act_libm);
      }
    }
    __syncwarp();  // the next chunk overwrites the staging area
    cur0 = next0;
    cur1 = next1;
  }
}

// L2 prefetch of the residual rows [row0, row0 + 64) x [col0, col0 + bn) of one consumer warpgroup, issued
// before the tile's mainloop so the epilogue finds them in L2 (contiguous residual rows only).
template <typename T>
__device__ __forceinline__ void PrefetchResidualL2(const MatmulProblem& p, int64_t z, int64_t row0, int64_t col0,
                                                   int bn, int tid) {
  if (p.residual == nullptr || p.res_col_stride != 1) return;
  const int64_t row = row0 + tid / 2;
  if (row >= p.m) return;
  const T* base = static_cast<const T*>(p.residual) + OffsetsOf(p, z).res + row * p.res_row_stride;
  // This thread's half of the row piece, in 128-byte lines.
  const int64_t half = bn / 2, c0 = col0 + (tid % 2) * half;
  for (int64_t c = c0; c < c0 + half && c < p.n; c += 128 / sizeof(T))
    asm volatile("prefetch.global.L2 [%0];\n" ::"l"(base + c));
}

// Output box h of a consumer warpgroup's tile (64x64 boxes from its first row and column): stacked two by two
// along M (kAlongM: the ping-pong schedule's 128 x 128) or side by side along N (the cooperative 64 x BN).
template <bool kAlongM>
__device__ __forceinline__ int64_t BoxRow(int64_t row0, int h) {
  return row0 + (kAlongM ? 64 * (h / 2) : 0);
}
template <bool kAlongM>
__device__ __forceinline__ int64_t BoxCol(int64_t col0, int h) {
  return col0 + (kAlongM ? 64 * (h % 2) : 64 * h);
}
// The boxed epilogue's residual: box h (of the tile at row0, col0 of matrix zres) into output box buffer h % 2
// of `boxes`, completing on the mbarrier resbar + 8 (h % 2).
template <bool kAlongM>
__device__ __forceinline__ void LoadResidualBox(const CUtensorMap* res_map, uint32_t boxes, uint32_t resbar, int h,
                                                int64_t col0, int64_t row0, int32_t zres) {
  const uint32_t bar = resbar + 8 * (h % 2);
  MbarExpectTx(bar, kWgmmaOutBox);
  TmaLoad3d(boxes + (h % 2) * kWgmmaOutBox, res_map, static_cast<int32_t>(BoxCol<kAlongM>(col0, h)),
            static_cast<int32_t>(BoxRow<kAlongM>(row0, h)), zres, bar);
}

// The TMA-store epilogue of one consumer warpgroup (thread tid of 128, output rows from row0, columns from
// col0). Each acc[i] is a 64 x 128 block: side by side along N (kAlongM false: the cooperative schedule's
// 64 rows x BN) or stacked along M (kAlongM: the ping-pong schedule's 128 x 128). Box b holds the columns
// 64(b % 2)..+63 of acc[b / 2], i.e. its fragment groups q = 8(b % 2) .. +7; register 4q+{0,1} is row g,
// columns 8q + 2t + {0,1} of the warp's 16 rows, 4q+{2,3} row g + 8. In the box (64 rows of 128 bytes,
// 128-byte swizzle), the 16-byte piece p of row r sits at piece p ^ (r % 8): a warp's 32 writes of one q
// hit 32 distinct banks. kRes (the cooperative boxed epilogue's unrolled form with a residual, the kernel's
// `unrolled_res`): each box's residual was loaded into it by TMA (StoreTileTmaFusedBoxed's protocol: the box waits
// on its residual barrier, and once its store has read it thread 0 refills it with box h + 2's residual); the pairs
// are added before the stores. The bias is folded and the activation applied before the call.
template <typename T, int kAcc, bool kAlongM, int kBoxes, bool kRes, typename Coord>
__device__ __forceinline__ void StoreTileTmaBoxes(const float (&acc)[kAcc][64], uint32_t boxes, const CUtensorMap* map,
                                                  Coord col0, Coord row0, int32_t z, int w, int tid,
                                                  const CUtensorMap* res_map, uint32_t resbar, uint32_t& res_phase,
                                                  int32_t zres) {
  // The thread index read afresh (volatile): derived from `tid`, the 16 box addresses below would be
  // hoisted out of the tile loop and held across the mainloop, where the accumulators leave no room.
  uint32_t x;
  asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(x));
  const int warp = (x / 32) % 4, lane = x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int h = 0; h < kBoxes; ++h) {
    const uint32_t box = boxes + (h % 2) * kWgmmaOutBox;
    if constexpr (kRes) {
      // The residual's load into the box was issued after the box's previous store had read it.
      MbarWait(resbar + 8 * (h % 2), (res_phase >> (h % 2)) & 1);
      res_phase ^= 1u << (h % 2);
    } else {
      // The box's previous store (two boxes ago, possibly in the previous tile; with one box a warpgroup,
      // the last one) has read it.
      if (tid == 0) BulkWaitReadBox<kBoxes>();
      NamedBarrier(1 + w, 128);
    }
#pragma unroll
    for (int qq = 0; qq < 8; ++qq) {
      const int q = 8 * (h % 2) + qq;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const uint32_t row = 16 * warp + g + 8 * half, slot = box + row * 128 + ((qq ^ g) * 16) + 4 * t;
        float lo = acc[h / 2][4 * q + 2 * half], hi = acc[h / 2][4 * q + 2 * half + 1];
        if constexpr (kRes) {  // this thread's residual pair, from the slot its output pair then overwrites
          uint32_t r;
          asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(r) : "r"(slot) : "memory");
          Epilogue<T>::AddPair(lo, hi, r);
        }
        StoreShared32(slot, PackPair<T>(lo, hi));
      }
    }
    FenceProxyAsync();
    NamedBarrier(1 + w, 128);
    if (tid == 0) {
      if constexpr (kRes) {
        TmaStore3d(map, box, static_cast<int32_t>(BoxCol<kAlongM>(col0, h)),
                   static_cast<int32_t>(BoxRow<kAlongM>(row0, h)), z);
      } else if constexpr (kAlongM) {
        TmaStore3d(map, box, col0 + 64 * (h % 2), row0 + 64 * (h / 2), z);
      } else {
        TmaStore3d(map, box, col0 + 64 * h, row0, z);
      }
      BulkCommit();
      if constexpr (kRes) {
        if (h + 2 < kBoxes) {  // refill the box with box h + 2's residual once the store has read it
          BulkWaitRead<0>();
          LoadResidualBox<kAlongM>(res_map, boxes, resbar, h + 2, col0, row0, zres);
        }
      }
    }
  }
}
// The plain matmul's epilogue (and the fused one's unrolled form without a residual).
template <typename T, int kAcc, bool kAlongM, int kBoxes = 2 * kAcc>
__device__ __forceinline__ void StoreTileTma(const float (&acc)[kAcc][64], uint32_t boxes, const CUtensorMap* map,
                                             int32_t col0, int32_t row0, int32_t z, int w, int tid) {
  uint32_t no_phase = 0;
  StoreTileTmaBoxes<T, kAcc, kAlongM, kBoxes, false, int32_t>(acc, boxes, map, col0, row0, z, w, tid, nullptr, 0,
                                                              no_phase, 0);
}

// Half k (of 4 kAcc) of a consumer warpgroup's accumulators: box k / 2 as StoreTileTma numbers the boxes
// (block k / 4, fragment groups 8 (k / 2 % 2) .. + 7), its groups 4 (k % 2) .. + 3, i.e. registers
// 16 (k % 4) .. + 15 of block k / 4. Picked at run time with every register index a constant, so the
// accumulators stay in registers and the epilogue below exists once.
template <int K, int kHalves, int kAcc>
__device__ __forceinline__ void SelectHalfBox(int k, float (&v)[16], const float (&acc)[kAcc][64]) {
  if (k == K) {
#pragma unroll
    for (int i = 0; i < 16; ++i) v[i] = acc[K / 4][16 * (K % 4) + i];
  } else if constexpr (K + 1 < kHalves) {
    SelectHalfBox<K + 1, kHalves, kAcc>(k, v, acc);
  }
}

// The fused epilogue through TMA stores (JK_MATMUL_WGMMA_EPI=tma): StoreTileTma's boxes, with bias,
// activation and residual applied in the fragment layout on the way (no float32 staging, no global stores
// from the threads), half a box (16 values a thread) at a time to leave the accumulators their registers.
// A thread owns rows 16 warp + g + {0, 8} x columns 8 qq + 2t + {0, 1} of each box; its bias and residual
// pairs are loaded first, and the activation between the bias and the residual adds covers the residual's
// latency. `ep` addresses bias and residual; `row0`/`col0` are the warpgroup's first output row and column
// (kAlongM: ping-pong 128 x 128, else cooperative 64 x BN).
template <typename T, int kAcc, bool kAlongM, int kBoxes = 2 * kAcc>
__device__ __forceinline__ void StoreTileTmaFused(const float (&acc)[kAcc][64], uint32_t boxes, const CUtensorMap* map,
                                                  const Epilogue<T>& ep, int64_t col0, int64_t row0, int32_t z, int w,
                                                  int tid, bool act_libm) {
  uint32_t x;
  asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(x));
  const int warp = (x / 32) % 4, lane = x % 32, g = lane / 4, t = lane % 4;
  const auto box_row = [&](int h) { return BoxRow<kAlongM>(row0, h); };
  const auto box_col = [&](int h) { return BoxCol<kAlongM>(col0, h); };
#pragma unroll 1
  for (int h = 0; h < kBoxes; ++h) {
    const uint32_t box = boxes + (h % 2) * kWgmmaOutBox;
#pragma unroll 1
    for (int hq = 0; hq < 2; ++hq) {
      const int64_t r = box_row(h) + 16 * warp + g, c = box_col(h) + 32 * hq + 2 * t;
      uint32_t res[8], bias[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        bias[j] = ep.BiasPair(c + 8 * j);
        res[2 * j] = ep.ResPair(r, c + 8 * j);
        res[2 * j + 1] = ep.ResPair(r + 8, c + 8 * j);
      }
      float v[16];
      SelectHalfBox<0, 2 * kBoxes, kAcc>(2 * h + hq, v, acc);
      // v[4 j + 2 half + e]: row g + 8 half, column 8 (4 hq + j) + 2t + e of the box.
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int half = 0; half < 2; ++half) Epilogue<T>::AddPair(v[4 * j + 2 * half], v[4 * j + 2 * half + 1], bias[j]);
      ActivateVecAs(ep.act, v, act_libm);
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int half = 0; half < 2; ++half)
          Epilogue<T>::AddPair(v[4 * j + 2 * half], v[4 * j + 2 * half + 1], res[2 * j + half]);
      if (hq == 0) {
        if (tid == 0) BulkWaitReadBox<kBoxes>();  // the box's previous store has read it
        NamedBarrier(1 + w, 128);
      }
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const uint32_t row = 16 * warp + g + 8 * half, qq = 4 * hq + j;
          StoreShared32(box + row * 128 + ((qq ^ g) * 16) + 4 * t,
                        PackPair<T>(v[4 * j + 2 * half], v[4 * j + 2 * half + 1]));
        }
    }
    FenceProxyAsync();
    NamedBarrier(1 + w, 128);
    if (tid == 0) {
      TmaStore3d(map, box, static_cast<int32_t>(box_col(h)), static_cast<int32_t>(box_row(h)), z);
      BulkCommit();
    }
  }
}

// StoreTileTmaFused's lean form (kWgmmaEpiBoxed): the residual of box h was loaded by TMA into the box itself
// (resbar[h % 2] completes it; a thread reads its residual pairs from the 4-byte slots it then overwrites with
// its outputs, so no other thread's accesses interleave), and the bias pairs are 4-byte aligned loads with
// only the column bound. Every epilogue instruction issued here slows the other warpgroup's mainloop on the
// same SM (bench/lab/s17_h200.md): this form drops the per-load alignment branches and the residual's global
// loads (their latency, and their row bounds: TMA zero-fills and clips). After box h's store has read the box,
// thread 0 refills it with box h + 2's residual. `res_phase`: the two barriers' parities, flipped per wait.
// Boxes [h_begin, h_end) of the tile (ping-pong's last tile is shared between the warpgroups).
template <typename T, int kAcc, bool kAlongM, int kBoxes = 2 * kAcc>
__device__ __forceinline__ void StoreTileTmaFusedBoxed(const float (&acc)[kAcc][64], uint32_t boxes,
                                                       const CUtensorMap* map, const CUtensorMap* res_map,
                                                       uint32_t resbar, uint32_t& res_phase, const T* bias,
                                                       Activation act, int64_t n, int64_t col0, int64_t row0,
                                                       int32_t z, int32_t zres, int w, int tid, int h_begin,
                                                       int h_end) {
  uint32_t x;
  asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(x));
  const int warp = (x / 32) % 4, lane = x % 32, g = lane / 4, t = lane % 4;
  const bool has_res = res_map != nullptr;
  const auto box_row = [&](int h) { return BoxRow<kAlongM>(row0, h); };
  const auto box_col = [&](int h) { return BoxCol<kAlongM>(col0, h); };
#pragma unroll 1
  for (int h = h_begin; h < h_end; ++h) {
    const uint32_t box = boxes + (h % 2) * kWgmmaOutBox;
    if (has_res) {
      MbarWait(resbar + 8 * (h % 2), (res_phase >> (h % 2)) & 1);
      res_phase ^= 1u << (h % 2);
    } else {
      if (tid == 0) BulkWaitReadBox<kBoxes>();  // the box's previous store has read it
      NamedBarrier(1 + w, 128);
    }
#pragma unroll 1
    for (int hq = 0; hq < 2; ++hq) {
      const int64_t c = box_col(h) + 32 * hq + 2 * t;
      uint32_t bias2[4];
#pragma unroll
      for (int j = 0; j < 4; ++j)
        bias2[j] = bias != nullptr && c + 8 * j < n
                       ? __ldg(reinterpret_cast<const unsigned int*>(bias + c + 8 * j))
                       : 0u;
      float v[16];
      SelectHalfBox<0, 2 * kBoxes, kAcc>(2 * h + hq, v, acc);
      // v[4 j + 2 half + e]: row g + 8 half, column 8 (4 hq + j) + 2t + e of the box.
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int half = 0; half < 2; ++half)
          Epilogue<T>::AddPair(v[4 * j + 2 * half], v[4 * j + 2 * half + 1], bias2[j]);
      ActivateVecAs(act, v, false);
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const uint32_t row = 16 * warp + g + 8 * half, qq = 4 * hq + j;
          const uint32_t slot = box + row * 128 + ((qq ^ g) * 16) + 4 * t;
#ifdef JK_WGMMA_TRACE
          if (has_res && jk_lab_mode != 3) {  // lab mode 3: the residual is loaded but not added
#else
          if (has_res) {
#endif
            uint32_t r;
            asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(r) : "r"(slot) : "memory");
            Epilogue<T>::AddPair(v[4 * j + 2 * half], v[4 * j + 2 * half + 1], r);
          }
          StoreShared32(slot, PackPair<T>(v[4 * j + 2 * half], v[4 * j + 2 * half + 1]));
        }
    }
    FenceProxyAsync();
    NamedBarrier(1 + w, 128);
    if (tid == 0) {
      TmaStore3d(map, box, static_cast<int32_t>(box_col(h)), static_cast<int32_t>(box_row(h)), z);
      BulkCommit();
      if (has_res && h + 2 < h_end) {  // refill the box with box h + 2's residual once the store has read it
        BulkWaitRead<0>();
        LoadResidualBox<kAlongM>(res_map, boxes, resbar, h + 2, col0, row0, zres);
      }
    }
  }
}

#endif  // sm_90a

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
