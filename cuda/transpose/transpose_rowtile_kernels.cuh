// kRowCopyTiled (session 33; the default for runs of 16, 32 and 128 bytes, lab tokens "rowtile4k" / "rowtile8k" /
// "rowtile16k"; LaunchRowTile in transpose_launch.cu): the row copy of short runs (a multiple of 16 bytes, at most 128) as a transpose of its
// two row axes whose element is the run, staged in shared memory. A is the output's innermost row axis (its
// output stride is the run: consecutive A runs are contiguous in y), B the input's (consecutive B runs are
// contiguous in x); every other row axis is a batch axis, decomposed once per tile. A CTA moves a tile of
// kTileA x kTileB runs in three steps:
//   load   16-byte vectors, consecutive lanes over consecutive slots of one A's kTileB runs (kTileB x run >= 128
//          contiguous bytes of x per A), every load of the thread in flight before the first shared store;
//   stage  tile row a (one A) holds its kTileB runs in input order, kTileB x kRunVecs 16-byte slots (a multiple
//          of 8: rows are whole 128-byte bank lines), slot s at s ^ ((a % (8 / kRunVecs)) * kRunVecs);
//   store  consecutive lanes over consecutive slots of one B's kTileA runs (kTileA x run >= 128 contiguous
//          bytes of y per B).
// Bank conflicts: 16-byte shared accesses are served 8 lanes at a time, conflict-free when the 8 addresses fall in
// 8 distinct 16-byte columns of a 128-byte line (address / 16 % 8). Writes: 8 lanes take 8 consecutive,
// 8-aligned slots of one row, and an XOR with a value < 8 permutes them. Reads: 8 lanes take 8 / kRunVecs
// consecutive (aligned) A rows x the kRunVecs vectors of one B; the logical slot's column is
// (b % (8 / kRunVecs)) * kRunVecs + v, the swizzle makes it ((b ^ a) % (8 / kRunVecs)) * kRunVecs + v: distinct
// over the 8 lanes. (128-byte runs need no swizzle: one run is a whole line.)
// Edges: A and B count whole runs, so every 16-byte access is predicated on its run's (a, b) alone.
// Why: the input-order row copy reads whole lines but writes each run alone, 16-32 bytes apart from its
// neighbours: 28-60% of the copy ceiling at 16-32-byte runs (0.47-0.67x jnp). Staged, both sides move >= 256
// contiguous bytes: 68-95% (1.0-1.33x jnp); transpose_launch.cu's default rule has the figures
// (bench/lab/s33_rowtile_lab_h200.txt). Session 8's lab tokens "rowtile" / "rowtile16" / "rowtile4"
// (bench/lab/s8_h200.md, since removed) were a different idea: the input-order walk in tiles, without staging.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "common/device.cuh"  // JK_DEVICE_ASSERT
#include "transpose/transpose_plan.h"

namespace jk::transpose {

struct RowTileArgs {
  const unsigned char* x;
  unsigned char* y;
  int64_t na, nb;       // runs along A and along B
  int64_t a_in, b_out;  // bytes: A's input stride, B's output stride (A's output and B's input stride: the run)
  int64_t tiles_a, tiles_b, tiles;
  int64_t bytes;           // of x and of y: only read by the JK_DEBUG_BOUNDS assertions
  bool a_fastest = false;  // tile order: A tiles fastest (neighbouring CTAs write on along y) or B (read on along x)
  AxisList<kMaxTransposeRank> batch;  // the other row axes, both strides in bytes
};

template <int kRunVecs, int kTileA, int kTileB, int kThreads>
struct RowTileShape {
  static constexpr int kVecs = kRunVecs;               // 16-byte vectors a run
  static constexpr int kRun = 16 * kRunVecs;           // bytes
  static constexpr int kRowSlots = kTileB * kRunVecs;  // 16-byte slots of one A's kTileB runs (a tile row)
  static constexpr int kColSlots = kTileA * kRunVecs;  // 16-byte slots of one B's kTileA runs
  static constexpr int kSlots = kTileA * kRowSlots;
  static constexpr int kSteps = kSlots / kThreads;  // 16-byte accesses per thread, each side
  static constexpr int kBytes = kSlots * 16;
  static constexpr int kSwizzleRows = 8 / kRunVecs;  // tile rows whose swizzles differ
  static_assert(kRunVecs == 1 || kRunVecs == 2 || kRunVecs == 4 || kRunVecs == 8, "runs of 16-128 bytes");
  static_assert(kRowSlots % 8 == 0 && kColSlots % 8 == 0, "whole 128-byte lines: per A in x, per B in y, per row");
  static_assert((kRowSlots & (kRowSlots - 1)) == 0 && (kColSlots & (kColSlots - 1)) == 0, "shifts, not divisions");
  static_assert(kThreads % 32 == 0 && kSlots % kThreads == 0 && kSteps >= 1, "whole steps");
  static_assert(kBytes <= 48 * 1024, "static shared memory");
};

// Byte offset in the tile of (row a, logical slot s).
template <typename S>
__device__ __forceinline__ unsigned RowTileSlot(unsigned a, unsigned s) {
  return (a * S::kRowSlots + (s ^ ((a % S::kSwizzleRows) * S::kVecs))) * 16;
}

// I: uint32_t where every byte offset and the tile count (plus the grid's overshoot) fit, else int64_t. One tile
// per CTA unless the tile count exceeds the grid (kMaxBlocks in the launcher): then a grid-stride loop.
template <int kRunVecs, int kTileA, int kTileB, int kThreads, typename I>
__global__ void __launch_bounds__(kThreads) RowTileCopy(RowTileArgs p) {
  using S = RowTileShape<kRunVecs, kTileA, kTileB, kThreads>;
  __shared__ __align__(16) unsigned char tile[S::kBytes];
  const I tiles = static_cast<I>(p.tiles), tiles_a = static_cast<I>(p.tiles_a), tiles_b = static_cast<I>(p.tiles_b);
  const I na = static_cast<I>(p.na), nb = static_cast<I>(p.nb), a_in = static_cast<I>(p.a_in);
  const I b_out = static_cast<I>(p.b_out);
  for (I t = blockIdx.x; t < tiles; t += gridDim.x) {
    I ta, tb, q;
    if (p.a_fastest) {
      const I r = t / tiles_a;
      ta = t - r * tiles_a, q = r / tiles_b, tb = r - q * tiles_b;
    } else {
      const I r = t / tiles_b;
      tb = t - r * tiles_b, q = r / tiles_a, ta = r - q * tiles_a;
    }
    // Batch index q over the other axes, in I offsets and with no division on the last axis: Decompose
    // (transpose_kernels.cuh) keeps int64 offsets and took the 16 KB tiles from 32 to 38-40 registers.
    I bin = 0, bout = 0;
#pragma unroll
    for (int k = 0; k < kMaxTransposeRank; ++k) {
      if (k < p.batch.n) {
        I r = q;
        if (k + 1 < p.batch.n) {
          const I d = static_cast<I>(p.batch.dim[k]), nq = q / d;
          r = q - nq * d, q = nq;
        }
        bin += r * static_cast<I>(p.batch.in[k]), bout += r * static_cast<I>(p.batch.out[k]);
      }
    }
    const I a0 = ta * kTileA, b0 = tb * kTileB;
    const I x0 = bin + a0 * a_in + b0 * S::kRun;   // run (a0, b0) in x
    const I y0 = bout + b0 * b_out + a0 * S::kRun;  // and in y
    uint4 v[S::kSteps];
#pragma unroll
    for (int i = 0; i < S::kSteps; ++i) {
      const unsigned l = i * kThreads + threadIdx.x, a = l / S::kRowSlots, s = l % S::kRowSlots;
      v[i] = make_uint4(0, 0, 0, 0);  // edge tiles: defined (never stored) values
      if (a0 + a < na && b0 + s / kRunVecs < nb) {
        const I at = x0 + a * a_in + s * 16;
        JK_DEVICE_ASSERT(static_cast<int64_t>(at) + 16 <= p.bytes);
        v[i] = __ldg(reinterpret_cast<const uint4*>(p.x + at));
      }
    }
#pragma unroll
    for (int i = 0; i < S::kSteps; ++i) {
      const unsigned l = i * kThreads + threadIdx.x;
      *reinterpret_cast<uint4*>(tile + RowTileSlot<S>(l / S::kRowSlots, l % S::kRowSlots)) = v[i];
    }
    __syncthreads();
    uint4 w[S::kSteps];  // every shared read before the first store (in-order issue would serialise them)
#pragma unroll
    for (int i = 0; i < S::kSteps; ++i) {
      const unsigned l = i * kThreads + threadIdx.x, b = l / S::kColSlots, r = l % S::kColSlots, a = r / kRunVecs;
      w[i] = *reinterpret_cast<const uint4*>(tile + RowTileSlot<S>(a, b * kRunVecs + r % kRunVecs));
    }
#pragma unroll
    for (int i = 0; i < S::kSteps; ++i) {
      const unsigned l = i * kThreads + threadIdx.x, b = l / S::kColSlots, r = l % S::kColSlots, a = r / kRunVecs;
      if (a0 + a < na && b0 + b < nb) {
        const I at = y0 + b * b_out + r * 16;
        JK_DEVICE_ASSERT(static_cast<int64_t>(at) + 16 <= p.bytes);
        *reinterpret_cast<uint4*>(p.y + at) = w[i];
      }
    }
    if (t + gridDim.x < tiles) __syncthreads();  // the next tile overwrites `tile` (uniform: t is the block's)
  }
}

}  // namespace jk::transpose
