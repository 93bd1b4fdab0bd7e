// The Hopper 16-bit matmul's epilogues (WgmmaTmaKernel, matmul_wgmma.cuh; the kernel's header says which runs
// where): the float32 staging of fused epilogues for Epilogue::StoreRow8, and the TMA-store boxes of plain and fused
// ones (general and boxed forms), with the residual boxes TMA loads. Device code for sm_90a (JK_WGMMA_DEVICE).
#pragma once
#include <cuda.h>  // CUtensorMap (a type only)

#include <cstdint>

#include "common/device.cuh"
#include "matmul/matmul_epilogue.cuh"
#include "matmul/matmul_wgmma_ptx.cuh"

namespace jk::mm {

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


#ifdef JK_WGMMA_DEVICE

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

}  // namespace jk::mm
