// kRowCopyBulk (lab candidate, sm_90): the row copy of short runs (e.g. the attention permute
// (0, 2, 1, 3), 128-byte runs) on the bulk copy engine. A persistent block streams chunks of the input
// (whole runs, contiguous) into shared memory with one cp.async.bulk each, kStages chunks in flight,
// then writes every run back with its own bulk store (cp.async.bulk.global.shared::cta): the threads only
// compute output offsets, no data passes through registers. Input order as RowCopy<.., kInputOrder>:
// `rows` sorted by input stride, `out` strides in bytes, runs a multiple of 16 bytes, buffers 16-byte
// aligned. The CPU emulator (no bulk copy engine) runs a plain per-run copy instead.
// Measured on an H200 (bench/lab/transpose_s4_h200.md): (32, 128, 64, 64) bfloat16 (0, 2, 1, 3) 20.22 us
// against 17.97 for the 16-byte row copy in input order: one bulk store per 128-byte run is too small a
// transfer for the copy engine. Lab token `rowbulk` only.
//
// kRowCopyTensor (session 32, sm_90): the same row copy as boxes of tensor maps (TMA), both sides in runs of
// ~1 KB. The copy is a transpose of two row axes whose element is the run: A, the output's innermost row axis
// (contiguous in the output), and B, the input's (contiguous in the input). Two 5-d tensor maps list the same
// axes in the same order (run bytes, A, B, then up to two others): the input's with the input's strides (so
// its B stride is the run, its A stride large: strides need not grow along the dims), the output's with the
// output's. A box of (run, box A, box B, 1, 1) read through the first lands in shared memory in the order the
// second writes it: box B runs of 1 KB contiguous per A on the read side, box A runs contiguous per B on the
// write side. One thread per CTA drives the copy engine through a ring of kTensorStages boxes; no data passes
// through registers, and edge boxes are clipped by the tensor maps (zero fill on load, no write past the end).
// Measured on an H200 (bench/lab/s32_rowtma_lab_h200.txt, CUPTI, 3 rotated rounds in one process, % of the copy
// ceiling, default -> 8 KB / 16 KB boxes): the attention permute (32, 128, 64, 64) bf16 87.7% -> 85.4 / 86.3%;
// (16, 2048, 16, 128) bf16 (256-byte runs) 95.5% -> 88.5 / 90.2%; (8, 32, 2048, 64) f16 92.6% -> 89.7 / 90.9%;
// 64-byte runs 94.3% -> 90.3 / 91.5%; only 32-byte runs gained (256 x 1024 x 8 f32, L2-resident: 60.6% -> 63.9%,
// where jnp runs at 91%). Lab tokens `rowtma` / `rowtma16` only.
#include <cuda_runtime.h>

#include <cstdint>

#include "transpose/transpose_kernels.cuh"
#ifndef JK_EMULATOR_DYNAMIC_SMEM
#include "common/bulk_copy.cuh"
#endif

namespace jk::transpose {

inline constexpr int kBulkChunkBytes = 8192, kBulkStages = 4, kBulkThreads = 64;

#if defined(JK_HAS_BULK_COPY)
__device__ __forceinline__ void BulkStoreRun(unsigned char* dst, const unsigned char* src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst), "r"(SmemAddress(src)),
               "r"(bytes)
               : "memory");
}
#endif

// kRowCopyTensor's tiles: boxes of box_a x box_b runs over the A and B axes, then the other two axes one by one.
struct TensorRowTiles {
  int32_t tiles_a, tiles_b, dim3, box_a, box_b;
  uint32_t box_bytes;
  int64_t tiles;
};
inline constexpr int kTensorStages = 4, kTensorThreads = 32;

#if defined(JK_HAS_BULK_COPY)
__device__ __forceinline__ void TensorLoad5d(uint32_t dst, const CUtensorMap* map, const int32_t* c, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}],"
      " [%7];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void TensorStore5d(const CUtensorMap* map, uint32_t src, const int32_t* c) {
  asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
               : "memory");
}
#endif

// A persistent grid of one-warp CTAs (thread 0 works), kTensorStages boxes of t.box_bytes of dynamic shared memory.
__global__ void __launch_bounds__(kTensorThreads) RowCopyTensor(const __grid_constant__ CUtensorMap in,
                                                               const __grid_constant__ CUtensorMap out,
                                                               TensorRowTiles t) {
#if defined(JK_HAS_BULK_COPY)
  extern __shared__ __align__(128) unsigned char boxes[];  // [kTensorStages][t.box_bytes]
  __shared__ uint64_t bar[kTensorStages];
  if (threadIdx.x != 0) return;
  auto coords = [&](int64_t tile, int32_t* c) {
    const int64_t r = tile / t.tiles_a, q = r / t.tiles_b;
    c[0] = 0;
    c[1] = static_cast<int32_t>(tile - r * t.tiles_a) * t.box_a;
    c[2] = static_cast<int32_t>(r - q * t.tiles_b) * t.box_b;
    c[3] = static_cast<int32_t>(q % t.dim3);
    c[4] = static_cast<int32_t>(q / t.dim3);
  };
  const uint32_t base = SmemAddress(boxes);
  auto load = [&](int s, int64_t tile) {
    int32_t c[5];
    coords(tile, c);
    MbarExpectTx(SmemAddress(&bar[s]), t.box_bytes);  // the whole box, clipped parts included (zero filled)
    TensorLoad5d(base + s * t.box_bytes, &in, c, SmemAddress(&bar[s]));
  };
  for (int s = 0; s < kTensorStages; ++s) BarrierInit(&bar[s]);
  BarrierInitFence();
  for (int s = 0; s < kTensorStages; ++s) {
    const int64_t tile = blockIdx.x + int64_t{s} * gridDim.x;
    if (tile < t.tiles) load(s, tile);
  }
  int64_t j = 0;
  for (int64_t tile = blockIdx.x; tile < t.tiles; tile += gridDim.x, ++j) {
    const int s = static_cast<int>(j % kTensorStages);
    BarrierWait(&bar[s], static_cast<uint32_t>(j / kTensorStages) & 1u);
    FenceProxyAsync();
    int32_t c[5];
    coords(tile, c);
    TensorStore5d(&out, base + s * t.box_bytes, c);
    BulkCommit();
    // Refill the slot of the previous box once its store has read it (every group but this one's).
    const int64_t next = tile - gridDim.x + int64_t{kTensorStages} * gridDim.x;
    if (j > 0 && next < t.tiles) {
      BulkWaitRead<1>();
      load(static_cast<int>((j - 1) % kTensorStages), next);
    }
  }
  BulkWaitAll();
#endif
}

// Requires run bytes (p.row_vecs * 16) <= kBulkChunkBytes.
template <typename I>
__global__ void __launch_bounds__(kBulkThreads) RowCopyBulk(RowArgs p) {
  const int64_t run_bytes = p.row_vecs * 16, runs = p.total_vecs / p.row_vecs;
  const int64_t per = kBulkChunkBytes / run_bytes;  // runs per chunk
  const int64_t chunks = (runs + per - 1) / per;
#if defined(JK_HAS_BULK_COPY)
  __shared__ __align__(128) unsigned char buf[kBulkStages][kBulkChunkBytes];
  __shared__ uint64_t bar[kBulkStages];
  auto load = [&](int s, int64_t c) {
    const int64_t r0 = c * per, n = runs - r0 < per ? runs - r0 : per;
    BulkLoadRow(buf[s], p.x + r0 * run_bytes, static_cast<uint32_t>(n * run_bytes), &bar[s]);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < kBulkStages; ++s) BarrierInit(&bar[s]);
    BarrierInitFence();
    for (int s = 0; s < kBulkStages; ++s) {
      const int64_t c = blockIdx.x + int64_t{s} * gridDim.x;
      if (c < chunks) load(s, c);
    }
  }
  __syncthreads();
  int it = 0;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x, ++it) {
    const int s = it % kBulkStages;
    BarrierWait(&bar[s], (it / kBulkStages) & 1);
    const int64_t r0 = c * per, n = runs - r0 < per ? runs - r0 : per;
    for (int64_t r = threadIdx.x; r < n; r += kBulkThreads) {
      int64_t in, out;
      Decompose<I>(p.rows, static_cast<I>(r0 + r), &in, &out);
      JK_DEVICE_ASSERT(out >= 0 && out + run_bytes <= p.bytes);
      BulkStoreRun(p.y + out, buf[s] + r * run_bytes, static_cast<uint32_t>(run_bytes));
    }
    BulkCommit();
    BulkWaitRead<0>();  // this thread's stores have read buf[s]
    __syncthreads();  // everyone's have: refill it
    const int64_t next = c + int64_t{kBulkStages} * gridDim.x;
    if (threadIdx.x == 0 && next < chunks) load(s, next);
  }
  BulkWaitAll();
#else  // emulator / pre-sm_90: the same chunks, copied run by run
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const int64_t r0 = c * per, n = runs - r0 < per ? runs - r0 : per;
    for (int64_t r = threadIdx.x; r < n; r += kBulkThreads) {
      int64_t in, out;
      Decompose<I>(p.rows, static_cast<I>(r0 + r), &in, &out);
      JK_DEVICE_ASSERT(out >= 0 && out + run_bytes <= p.bytes);
      for (int64_t b = 0; b < run_bytes; b += 16)
        *reinterpret_cast<uint4*>(p.y + out + b) = *reinterpret_cast<const uint4*>(p.x + (r0 + r) * run_bytes + b);
    }
  }
#endif
}

// kTiledVec16Swizzled with its loads as per-thread cp.async copies straight into the swizzled tile (session 36, lab
// token "wideasync", the 256x256-byte int8 tile): no register staging, so the 512-thread CTA needs far fewer than the
// staged form's 62 registers, which left 2 CTAs an SM. Out-of-range slots are not copied: they feed only stores that
// the edge checks drop. The emulator and pre-sm_90 builds load through registers as the staged form does.
template <int kE, int kTileElems, int kBlock>
__global__ void __launch_bounds__(kBlock) TiledVec16SwizzledAsync(TiledArgs p) {
  using S = VecTile<kE, kTileElems, kBlock>;
  unsigned char* tile = TileSmem<kTileElems * kTileElems * kE>();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    int64_t ta, tb, bin, bout;
    TileCoords(p, t, &ta, &tb, &bin, &bout);
    const Geometry64 g{p, bin, bout};
    const int64_t a0 = ta * kTileElems, b0 = tb * kTileElems;
#if defined(JK_HAS_BULK_COPY)
#pragma unroll
    for (int i = 0; i < S::kLoadSteps; ++i) {
      const int s = i * S::kWarps + warp;
      const int slot = (s % (S::kSlots / 8)) * 8 + (lane & 7), r = (s / (S::kSlots / 8)) * 4 + (lane >> 3);
      const int64_t b = b0 + r, a = a0 + slot * S::kV;
      if (b < g.nb() && a < g.na()) {
        const int64_t at = g.RowIn(b) + a;
        JK_DEVICE_ASSERT(at + S::kV <= g.elements());
        CopyAsync16(tile + SwizzledSlot<S>(r, slot), g.x() + at * kE);
      }
    }
    CopyAsyncCommit();
    CopyAsyncWaitAll();
#else
    uint4 v[S::kLoadSteps];
    Vec16Load<kE, kTileElems, kBlock>(g, a0, b0, v);
    Vec16ToSmem<kE, kTileElems, kBlock>(v, tile);
#endif
    __syncthreads();
    Vec16Store<kE, kTileElems, kBlock>(g, a0, b0, tile);
    __syncthreads();  // the next tile overwrites `tile`
  }
}

}  // namespace jk::transpose
