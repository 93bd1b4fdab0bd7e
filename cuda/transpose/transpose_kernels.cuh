// Transpose kernels. Element values are never interpreted: everything moves as unsigned storage of the
// element's size (1, 2, 4 or 8 bytes), so bool, ints, floats and complex64 share one instantiation.
//
//   kTiledVec16Swizzled  tile through shared memory, 16-byte global loads and stores on both sides,
//                        XOR-swizzled tile (conflict-free 16-byte writes and 4-byte column reads),
//                        1- and 2-byte elements packed 4 or 2 to a word and un-packed with byte_perm.
//   kTiledScalarPadded   the classic padded tile (32x33 for 1- and 2-byte elements, 64x65 for 4 and
//                        8) with one element per access: any size, any alignment (odd shapes such
//                        as 4097x1023, slices at odd offsets).
//   kRowCopy             last axis kept: each output row is a contiguous run of the input.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "common/device.cuh"  // JK_DEVICE_ASSERT (bounds checks of the JK_DEBUG_BOUNDS build)
#include "transpose/transpose_plan.h"

namespace jk::transpose {

struct TiledArgs {
  const unsigned char* x;
  unsigned char* y;
  int64_t na, nb;              // sizes of the A group (input-contiguous) and B group (output-contiguous)
  int64_t tiles_a, tiles_b, tiles;
  int64_t elements;              // of x and of y: only read by the JK_DEBUG_BOUNDS assertions
  AxisList<kMaxGroupAxes> a, b;  // a: output strides of tile columns; b: input strides of tile rows
  AxisList<kMaxTransposeRank> batch;
};

struct RowArgs {
  const unsigned char* x;
  unsigned char* y;
  int64_t row_vecs;    // accesses per output row
  int64_t total_vecs;  // accesses in the whole output
  int64_t bytes;       // of x and of y: only read by the JK_DEBUG_BOUNDS assertions
  AxisList<kMaxTransposeRank> rows;  // `in` strides in bytes
};

// Offsets (in elements) of flat index i over `axes`; the unrolled guard keeps the axis arrays in
// registers/param space instead of local memory. I = uint32_t where everything fits (cheap division).
template <typename I, int N>
__host__ __device__ __forceinline__ void Decompose(const AxisList<N>& axes, I i, int64_t* in, int64_t* out) {
  int64_t a = 0, b = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (k < axes.n) {
      const I d = static_cast<I>(axes.dim[k]);
      const I q = i / d, r = i - q * d;
      a += static_cast<int64_t>(r) * axes.in[k];
      b += static_cast<int64_t>(r) * axes.out[k];
      i = q;
    }
  }
  *in = a;
  *out = b;
}

// Input offset of tile row b / output offset of tile column a. One axis (the common case) needs no
// division; grouped axes divide in 32 bits whenever the group fits (always, in practice). The test is on
// the group's size, not on i: a group's last axis may alone exceed 2^32 (groups grow while short), and a
// small i would then divide by that dim truncated to 32 bits.
template <bool kIn>
__host__ __device__ __forceinline__ int64_t GroupOffset(const AxisList<kMaxGroupAxes>& g, int64_t i,
                                                        int64_t size) {
  if (g.n == 1) return i * (kIn ? g.in[0] : g.out[0]);
  int64_t in, out;
  if (size <= 0xffffffffll) {
    Decompose<uint32_t>(g, static_cast<uint32_t>(i), &in, &out);
  } else {
    Decompose<int64_t>(g, i, &in, &out);
  }
  return kIn ? in : out;
}
__device__ __forceinline__ int64_t RowIn(const AxisList<kMaxGroupAxes>& g, int64_t b, int64_t nb) {
  return GroupOffset<true>(g, b, nb);
}
__device__ __forceinline__ int64_t ColOut(const AxisList<kMaxGroupAxes>& g, int64_t a, int64_t na) {
  return GroupOffset<false>(g, a, na);
}

// Tile t -> (tile along A, tile along B, batch offsets). A varies fastest: neighbouring blocks read
// neighbouring segments of the same input rows. Every block pays this once, so it divides in 32 bits
// whenever the tile count fits (64-bit division is a ~70-instruction software routine, measurable on
// single-wave problems).
__host__ __device__ __forceinline__ void TileCoords(const TiledArgs& p, int64_t t, int64_t* ta,
                                                    int64_t* tb, int64_t* bin, int64_t* bout) {
  if (p.tiles <= 0xffffffffll) {
    const uint32_t u = static_cast<uint32_t>(t), na = static_cast<uint32_t>(p.tiles_a),
                   nb = static_cast<uint32_t>(p.tiles_b);
    const uint32_t rest = u / na, batch = rest / nb;
    *ta = u - rest * na;
    *tb = rest - batch * nb;
    Decompose<uint32_t>(p.batch, batch, bin, bout);
    return;
  }
  *ta = t % p.tiles_a;
  const int64_t rest = t / p.tiles_a;
  *tb = rest % p.tiles_b;
  Decompose<int64_t>(p.batch, rest / p.tiles_b, bin, bout);
}

// ---- kTiledVec16Swizzled -----------------------------------------------------------------------
// Tile side in elements and block size are template parameters so the lab can sweep them; the
// launcher uses the defaults (the measured winners).
template <int kE, int kTileElems = (kE == 1 ? 128 : (kE == 8 ? 32 : 64)), int kBlock = 256>
struct VecTile {
  static constexpr int kTile = kTileElems;
  static constexpr int kThreads = kBlock;
  static constexpr int kV = 16 / kE;                // elements per 16-byte access
  static constexpr int kRowBytes = kTile * kE;      // a multiple of 128: rows are bank-neutral
  static constexpr int kSlots = kRowBytes / 16;     // 16-byte slots per tile row
  static constexpr int kP = kE >= 4 ? 1 : 4 / kE;   // output rows sharing one 4-byte smem word
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kLoadSteps = kTile * kSlots / 32 / kWarps;
  static constexpr int kStoreSteps = (kTile / kP / 4) * (kSlots / 8) / kWarps;
  static_assert(kSlots >= 8 && kSlots % 8 == 0, "tile rows must be whole 128-byte lines");
  static_assert(kLoadSteps >= 1 && kStoreSteps >= 1, "tile too small for the block");
};
template <int kE>
struct SmemWord {
  using type = uint32_t;
};
template <>
struct SmemWord<8> {
  using type = uint2;
};

// Byte offset of (tile row r, 16-byte slot s). XOR with (r / kV) % 8: the 16-byte writes of 8 lanes in
// one row hit 8 distinct slots, and the column reads of 8 lanes (rows v*kV + k, v = 0..7) do too.
template <typename S>
__device__ __forceinline__ int SwizzledSlot(int r, int s) {
  return r * S::kRowBytes + ((s ^ ((r / S::kV) & 7)) << 4);
}

// Packs the column words w[0..kV) (each holding kP consecutive output rows) into kP 16-byte rows.
__device__ __forceinline__ void PackRows(const uint32_t (&w)[4], uint4 (&o)[1]) {
  o[0] = make_uint4(w[0], w[1], w[2], w[3]);
}
__device__ __forceinline__ void PackRows(const uint2 (&w)[2], uint4 (&o)[1]) {
  o[0] = make_uint4(w[0].x, w[0].y, w[1].x, w[1].y);
}
__device__ __forceinline__ void PackRows(const uint32_t (&w)[8], uint4 (&o)[2]) {
  o[0] = make_uint4(__byte_perm(w[0], w[1], 0x5410), __byte_perm(w[2], w[3], 0x5410),
                    __byte_perm(w[4], w[5], 0x5410), __byte_perm(w[6], w[7], 0x5410));
  o[1] = make_uint4(__byte_perm(w[0], w[1], 0x7632), __byte_perm(w[2], w[3], 0x7632),
                    __byte_perm(w[4], w[5], 0x7632), __byte_perm(w[6], w[7], 0x7632));
}
__device__ __forceinline__ void PackRows(const uint32_t (&w)[16], uint4 (&o)[4]) {
  uint32_t y[4][4];  // y[j][q]: output row j, word q = byte j of w[4q .. 4q+3]
#pragma unroll
  for (int q = 0; q < 4; ++q) {  // 4x4 byte transpose
    const uint32_t t0 = __byte_perm(w[4 * q], w[4 * q + 1], 0x5140);
    const uint32_t t1 = __byte_perm(w[4 * q], w[4 * q + 1], 0x7362);
    const uint32_t t2 = __byte_perm(w[4 * q + 2], w[4 * q + 3], 0x5140);
    const uint32_t t3 = __byte_perm(w[4 * q + 2], w[4 * q + 3], 0x7362);
    y[0][q] = __byte_perm(t0, t2, 0x5410);
    y[1][q] = __byte_perm(t0, t2, 0x7632);
    y[2][q] = __byte_perm(t1, t3, 0x5410);
    y[3][q] = __byte_perm(t1, t3, 0x7632);
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) o[j] = make_uint4(y[j][0], y[j][1], y[j][2], y[j][3]);
}

// Requires na % kV == 0, nb % kV == 0 and 16-byte aligned buffers (the launcher checks), so a 16-byte
// access is either wholly inside the array or wholly outside.
template <int kE, int kTileElems = VecTile<kE>::kTile, int kBlock = 256>
__global__ void __launch_bounds__(kBlock) TiledVec16Swizzled(TiledArgs p) {
  using S = VecTile<kE, kTileElems, kBlock>;
  using Word = typename SmemWord<kE>::type;
  __shared__ __align__(16) unsigned char tile[S::kTile * S::kRowBytes];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    int64_t ta, tb, bin, bout;
    TileCoords(p, t, &ta, &tb, &bin, &bout);
    const int64_t a0 = ta * S::kTile, b0 = tb * S::kTile;
    // Load: each warp step covers 4 tile rows x 8 slots (4 x 128 contiguous bytes).
    uint4 v[S::kLoadSteps];
#pragma unroll
    for (int i = 0; i < S::kLoadSteps; ++i) {  // all loads first: kLoadSteps requests in flight
      const int s = i * S::kWarps + warp;
      const int slot = (s % (S::kSlots / 8)) * 8 + (lane & 7), r = (s / (S::kSlots / 8)) * 4 + (lane >> 3);
      const int64_t b = b0 + r, a = a0 + slot * S::kV;
      v[i] = make_uint4(0, 0, 0, 0);  // edge tiles: defined (never stored) values
      if (b < p.nb && a < p.na) {
        const int64_t at = bin + RowIn(p.b, b, p.nb) + a;
        JK_DEVICE_ASSERT(at >= 0 && at + S::kV <= p.elements);
        v[i] = __ldg(reinterpret_cast<const uint4*>(p.x + at * kE));
      }
    }
#pragma unroll
    for (int i = 0; i < S::kLoadSteps; ++i) {
      const int s = i * S::kWarps + warp;
      const int slot = (s % (S::kSlots / 8)) * 8 + (lane & 7), r = (s / (S::kSlots / 8)) * 4 + (lane >> 3);
      *reinterpret_cast<uint4*>(tile + SwizzledSlot<S>(r, slot)) = v[i];
    }
    __syncthreads();
    // Store: each warp step covers 4 groups of kP output rows x 8 slots of 16 bytes.
#pragma unroll
    for (int i = 0; i < S::kStoreSteps; ++i) {
      const int s = i * S::kWarps + warp;
      const int slot = (s % (S::kSlots / 8)) * 8 + (lane & 7), og = (s / (S::kSlots / 8)) * 4 + (lane >> 3);
      const int byte = og * S::kP * kE;  // this lane's column word inside a tile row
      Word w[S::kV];
#pragma unroll
      for (int k = 0; k < S::kV; ++k) {
        const int r = slot * S::kV + k;
        w[k] = *reinterpret_cast<const Word*>(tile + SwizzledSlot<S>(r, byte >> 4) + (byte & 15));
      }
      uint4 o[S::kP];
      PackRows(w, o);
      const int64_t b = b0 + slot * S::kV;
#pragma unroll
      for (int j = 0; j < S::kP; ++j) {
        const int64_t a = a0 + og * S::kP + j;
        if (a < p.na && b < p.nb) {
          const int64_t at = bout + ColOut(p.a, a, p.na) + b;
          JK_DEVICE_ASSERT(at >= 0 && at + S::kV <= p.elements);
          *reinterpret_cast<uint4*>(p.y + at * kE) = o[j];
        }
      }
    }
    __syncthreads();  // the next tile overwrites `tile`
  }
}

// ---- kTiledScalarPadded ------------------------------------------------------------------------
// 64x64 tile, 16 rows per thread (256 threads): the fastest of the lab sweep on 4097x1023 float32 on
// the H200 (1955 GB/s against 1767 for 32x32 / 8 rows and 1516 for the classic 32x32 / 4 rows).
template <int kTileElems = 64, int kRows = 16>
struct PaddedTile {
  static constexpr int kTile = kTileElems, kRowsPerThread = kRows, kThreads = kTile * kTile / kRows;
};

template <typename T, int kTileElems = 64, int kRows = 16>
__global__ void __launch_bounds__(PaddedTile<kTileElems, kRows>::kThreads) TiledScalarPadded(TiledArgs p) {
  constexpr int kTile = kTileElems, kStep = PaddedTile<kTileElems, kRows>::kThreads / kTile;
  __shared__ T tile[kTile][kTile + 1];  // +1: the column reads of the store phase hit 32 banks
  const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;
  const T* x = reinterpret_cast<const T*>(p.x);
  T* y = reinterpret_cast<T*>(p.y);
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    int64_t ta, tb, bin, bout;
    TileCoords(p, t, &ta, &tb, &bin, &bout);
    const int64_t a0 = ta * kTile, b0 = tb * kTile;
    T v[kRows] = {};
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int64_t b = b0 + ty + i * kStep, a = a0 + tx;
      if (b < p.nb && a < p.na) {
        const int64_t at = bin + RowIn(p.b, b, p.nb) + a;
        JK_DEVICE_ASSERT(at >= 0 && at < p.elements);
        v[i] = x[at];
      }
    }
#pragma unroll
    for (int i = 0; i < kRows; ++i) tile[ty + i * kStep][tx] = v[i];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const int64_t a = a0 + ty + i * kStep, b = b0 + tx;
      if (a < p.na && b < p.nb) {
        const int64_t at = bout + ColOut(p.a, a, p.na) + b;
        JK_DEVICE_ASSERT(at >= 0 && at < p.elements);
        y[at] = tile[tx][ty + i * kStep];
      }
    }
    __syncthreads();
  }
}

// ---- kRowCopy ----------------------------------------------------------------------------------
// V is the access (uint4 for 16-byte runs, else the element). Writes are fully contiguous; each
// access finds its input row by decomposing the output row index. 4 accesses per thread in flight.
template <typename V, typename I>
__global__ void __launch_bounds__(256) RowCopy(RowArgs p) {
  constexpr int kUnroll = 4;
  const I total = static_cast<I>(p.total_vecs), row_vecs = static_cast<I>(p.row_vecs);
  const I stride = static_cast<I>(gridDim.x) * blockDim.x * kUnroll;
  for (I base = static_cast<I>(blockIdx.x) * blockDim.x * kUnroll + threadIdx.x; base < total;
       base += stride) {
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const I g = base + u * blockDim.x;
      if (g < total) {
        const I row = g / row_vecs, col = g - row * row_vecs;
        int64_t in, out;
        Decompose<I>(p.rows, row, &in, &out);
        const int64_t at = in + static_cast<int64_t>(col) * sizeof(V);
        JK_DEVICE_ASSERT(at >= 0 && at + static_cast<int64_t>(sizeof(V)) <= p.bytes);
        v[u] = *reinterpret_cast<const V*>(p.x + at);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const I g = base + u * blockDim.x;
      if (g < total) reinterpret_cast<V*>(p.y)[g] = v[u];
    }
  }
}

}  // namespace jk::transpose
