// Transpose kernels. Element values are never interpreted: everything moves as unsigned storage of the
// element's size (1, 2, 4 or 8 bytes), so bool, ints, floats and complex64 share one instantiation.
//
//   kTiledVec16Swizzled  tile through shared memory, 16-byte global loads and stores on both sides,
//                        XOR-swizzled tile (conflict-free 16-byte writes and 4-byte column reads),
//                        1- and 2-byte elements packed 4 or 2 to a word and un-packed with byte_perm;
//                        tiles over 48 KB (the 256x256-byte int8 tile) in dynamic shared memory.
//   kTiledScalarPadded   the classic padded tile (32x33 for 1- and 2-byte elements, 64x65 for 4 and
//                        8) with one element per access: any size, any alignment (odd shapes such
//                        as 4097x1023, slices at odd offsets).
//   kTiledRegisterBlocks no shared memory: each thread transposes a 16-byte x 16-byte block in
//                        registers (compact flavour only); the small tier of 4-byte elements that are
//                        batched, split or ragged.
//   kTiledPaddedLean     the 32x33 padded tile of 128 threads with byte offsets and no bounds checks, on a
//                        grid of tiles walked down x's rows: small 2-D 4-byte problems with sides multiple
//                        of 32 (XLA's own small float32 transpose is this tile on a 1-D grid).
//   kRowCopy             last axis kept: each output row is a contiguous run of the input; runs of 16, 32
//                        and 128 bytes as tiles of runs staged in shared memory (kRowCopyTiled,
//                        transpose_rowtile_kernels.cuh).
// Lab-only tiers (JK_TRANSPOSE_TIERS tokens; measured slower): kTiledSmallCta (transpose_small_kernels.cuh)
// and kRowCopyBulk (transpose_bulk_kernels.cuh).
//
// The two tiled kernels come in two index flavours sharing one tile body:
//   general (TiledArgs)   64-bit offsets, groups of up to 4 axes, up to 16 batch axes, grid-stride loop;
//   compact (TiledArgs32) 32-bit offsets, groups of 1 or 2 axes, at most one batch axis, one tile per
//                         block (on a grid of tiles where there is no batch axis: CompactTile), parameters
//                         in 48 bytes (the general struct is 664 bytes and a tile's index math reads fields
//                         spread over several 64-byte lines). Measured on an H200, it takes
//                         0.6-4 us off problems of a few microseconds (2048x512 float32 3.5 -> 2.4 us);
//                         which part (constant-cache lines touched before the first load, 64-bit
//                         multiplies, the loop) matters most was not isolated. The launcher uses it for
//                         problems up to 32 MiB, and for larger 1-byte ones that do not take the
//                         256x256 tile (transpose_launch.cu says why).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

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
  bool b_fastest = false;  // tile order (TileCoords): B fastest (big tiles) or A fastest
};

// Compact geometry (see the header): every byte offset < 2^31. A group's offset of index i is
// (i % dim) * stride + (i / dim) * stride_hi; single-axis groups (kSplit = false) skip the division.
struct TiledArgs32 {
  const unsigned char* x;
  unsigned char* y;
  uint32_t na, nb, tiles_a, tiles_b;
  uint32_t a_out, b_in;          // y stride of a tile column, x stride of a tile row (the groups' inner axes)
  uint32_t batch_in, batch_out;  // the batch axis, if any (else 0, 0)
  // ---- 48 bytes: everything a single-axis-group tile reads; below only for kSplit and JK_DEBUG_BOUNDS
  uint32_t a_dim, a_out_hi, b_dim, b_in_hi;
  uint32_t elements;
};

// Division of a 32-bit index by a runtime divisor d in [1, 2^31] as a multiply-high, an add and a shift (Granlund and
// Montgomery, 1994): q = (umulhi(i, m) + i) >> s with s = ceil(log2 d), m = floor(2^32 (2^s - d) / d) + 1, exact for
// every 32-bit i with the add in 64 bits (checked on the host for 215 divisors up to 2^31 x 20000 indices each). A
// 32-bit division instruction sequence is ~20 dependent instructions (I2F, MUFU.RCP, multiplies, fix-ups); the row
// copy divides each access's index once per axis, in front of its load.
struct FastDivU32 {
  uint32_t m = 1, s = 0;  // d = 1
  static FastDivU32 For(uint32_t d) {
    FastDivU32 f;
    while ((uint64_t{1} << f.s) < d) ++f.s;
    f.m = static_cast<uint32_t>((((uint64_t{1} << f.s) - d) << 32) / d + 1);
    return f;
  }
  __host__ __device__ __forceinline__ uint32_t Div(uint32_t i) const {
#ifdef __CUDA_ARCH__
    const uint32_t hi = __umulhi(i, m);
#else
    const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(i) * m) >> 32);
#endif
    return static_cast<uint32_t>((static_cast<uint64_t>(hi) + i) >> s);
  }
};

struct RowArgs {
  const unsigned char* x;
  unsigned char* y;
  int64_t row_vecs;    // accesses per output row
  int64_t total_vecs;  // accesses in the whole output
  int64_t bytes;       // of x and of y: only read by the JK_DEBUG_BOUNDS assertions
  AxisList<kMaxTransposeRank> rows;  // `in` strides in bytes
  // Set by the launcher for RowCopy's kFastDiv form (32-bit indices): the divisors row_vecs and rows.dim[k].
  FastDivU32 row_div, dim_div[kMaxTransposeRank];
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

// Decompose over 32-bit indices with the divisions precomputed (FastDivU32, one per axis).
template <int N>
__device__ __forceinline__ void DecomposeFast(const AxisList<N>& axes, const FastDivU32* div, uint32_t i, int64_t* in,
                                              int64_t* out) {
  int64_t a = 0, b = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (k < axes.n) {
      const uint32_t q = div[k].Div(i), r = i - q * static_cast<uint32_t>(axes.dim[k]);
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

// Tile t -> (tile along A, tile along B, batch offsets). Every block pays this once, so it divides in 32
// bits whenever the tile count fits (64-bit division is a ~70-instruction software routine, measurable on
// single-wave problems). Two orders within a batch index:
//   A fastest: neighbouring blocks read neighbouring segments of the same input rows;
//   B fastest: neighbouring blocks write neighbouring segments of the same output rows. The launcher takes
//     it for problems of several waves of big tiles: H200, back to back (bench/lab/s18_transpose_lab_h200.txt,
//     every variant twice in one process), bf16 8192^2 74.4 -> 72.7 us, int8 8192^2 41.3 -> 40.2, int8
//     16384^2 145.0 -> 139.8, float32 8192^2 141.1 -> 137.1, bf16 16384^2 277.4 -> 266.3, float32 16384^2
//     550.7 -> 526.2; bands of 32 tile rows B fastest in between; single-wave int8 2048x512 lost (2.43 ->
//     2.56 us under ncu), so small problems keep A fastest. Square groups of 8-32 x 8-32 tiles, B fastest inside a
//     group (the blocks in flight then cover a square, not whole output rows), lost too: int8 8192^2 35.3 -> 35.5,
//     35.8 and 37.0 us, 16384x4096 35.1 -> 35.7 / 36.2, 4096x16384 34.8 -> 35.1 (session 38 call 4, best of 5).
__host__ __device__ __forceinline__ void TileCoords(const TiledArgs& p, int64_t t, int64_t* ta,
                                                    int64_t* tb, int64_t* bin, int64_t* bout) {
  if (p.tiles <= 0xffffffffll) {
    const uint32_t u = static_cast<uint32_t>(t), na = static_cast<uint32_t>(p.tiles_a),
                   nb = static_cast<uint32_t>(p.tiles_b);
    const uint32_t batch = u / (na * nb), r = u - batch * (na * nb);
    const uint32_t fast = p.b_fastest ? nb : na, slow = r / fast, f = r - slow * fast;
    *ta = p.b_fastest ? slow : f;
    *tb = p.b_fastest ? f : slow;
    Decompose<uint32_t>(p.batch, batch, bin, bout);
    return;
  }
  const int64_t per_batch = p.tiles_a * p.tiles_b, r = t % per_batch;
  *ta = p.b_fastest ? r / p.tiles_b : r % p.tiles_a;
  *tb = p.b_fastest ? r % p.tiles_b : r / p.tiles_a;
  Decompose<int64_t>(p.batch, t / per_batch, bin, bout);
}

// ---- per-tile geometry: the one thing the two index flavours differ in -----------------------------
// A tile body asks its geometry for the element offset of tile row b in x (RowIn) and of tile
// column a in y (ColOut), batch offset included, in the flavour's index type.
struct Geometry64 {
  using Index = int64_t;
  const TiledArgs& p;
  int64_t bin, bout;
  __device__ __forceinline__ const unsigned char* x() const { return p.x; }
  __device__ __forceinline__ unsigned char* y() const { return p.y; }
  __device__ __forceinline__ int64_t na() const { return p.na; }
  __device__ __forceinline__ int64_t nb() const { return p.nb; }
  __device__ __forceinline__ int64_t elements() const { return p.elements; }
  __device__ __forceinline__ int64_t RowIn(int64_t b) const { return bin + transpose::RowIn(p.b, b, p.nb); }
  __device__ __forceinline__ int64_t ColOut(int64_t a) const { return bout + transpose::ColOut(p.a, a, p.na); }
};

template <bool kSplit>
struct Geometry32 {
  using Index = uint32_t;
  const TiledArgs32& p;
  uint32_t bin, bout;
  __device__ __forceinline__ const unsigned char* x() const { return p.x; }
  __device__ __forceinline__ unsigned char* y() const { return p.y; }
  __device__ __forceinline__ uint32_t na() const { return p.na; }
  __device__ __forceinline__ uint32_t nb() const { return p.nb; }
  __device__ __forceinline__ int64_t elements() const { return p.elements; }
  __device__ __forceinline__ uint32_t RowIn(uint32_t b) const {
    if (!kSplit) return bin + b * p.b_in;
    const uint32_t hi = b / p.b_dim;
    return bin + (b - hi * p.b_dim) * p.b_in + hi * p.b_in_hi;
  }
  __device__ __forceinline__ uint32_t ColOut(uint32_t a) const {
    if (!kSplit) return bout + a * p.a_out;
    const uint32_t hi = a / p.a_dim;
    return bout + (a - hi * p.a_dim) * p.a_out + hi * p.a_out_hi;
  }
};

// Compact tile coordinates: block t -> (tile along A, tile along B, batch index), in one of TileCoords'
// orders, fixed at compile time (a runtime choice cost the single-wave tiles ~0.06 us: int8 2048x512 1.68 ->
// 1.76 us, bf16 1.76 -> 1.82 in the session-18 benchmark). kTileGrid: the same coordinates from a grid of tiles (x
// the fast tile index, y the slow one, z the batch), so no division stands between a block's start and its first
// load; the launcher takes it for problems without a batch axis (TileGridFor has the measurements).
template <bool kSplit, bool kBFastest = false, bool kTileGrid = false>
__device__ __forceinline__ Geometry32<kSplit> CompactTile(const TiledArgs32& p, uint32_t* a0, uint32_t* b0,
                                                          uint32_t tile) {
  const uint32_t t = blockIdx.x;
  if constexpr (kTileGrid) {
    *a0 = (kBFastest ? blockIdx.y : blockIdx.x) * tile;
    *b0 = (kBFastest ? blockIdx.x : blockIdx.y) * tile;
    return {p, blockIdx.z * p.batch_in, blockIdx.z * p.batch_out};
  } else if constexpr (kBFastest) {
    const uint32_t per_batch = p.tiles_a * p.tiles_b, batch = t / per_batch, r = t - batch * per_batch;
    const uint32_t ta = r / p.tiles_b;
    *a0 = ta * tile;
    *b0 = (r - ta * p.tiles_b) * tile;
    return {p, batch * p.batch_in, batch * p.batch_out};
  } else {
    const uint32_t rest = t / p.tiles_a, batch = rest / p.tiles_b;
    *a0 = (t - rest * p.tiles_a) * tile;
    *b0 = (rest - batch * p.tiles_b) * tile;
    return {p, batch * p.batch_in, batch * p.batch_out};
  }
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
// one row hit 8 distinct slots, and the column reads of 8 lanes (rows v*kV + k, v = 0..7) do too. The narrow-access
// tiles (NarrowTile) key on r / kPieceElems, their column reads' stride.
template <typename S, int kKey = S::kV>
__device__ __forceinline__ int SwizzledSlot(int r, int s) {
  return r * S::kRowBytes + ((s ^ ((r / kKey) & 7)) << 4);
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

// One tile in three steps (load to registers, registers to the tile, tile to y). Requires na % kV == 0,
// nb % kV == 0 and 16-byte aligned buffers (the launcher checks), so a 16-byte access is either wholly
// inside the array or wholly outside.
// Load: each warp step covers 4 tile rows x 8 slots (4 x 128 contiguous bytes); all loads first, so
// kLoadSteps requests are in flight.
template <int kE, int kTileElems, int kBlock, typename G>
__device__ __forceinline__ void Vec16Load(const G& g, typename G::Index a0, typename G::Index b0,
                                          uint4 (&v)[VecTile<kE, kTileElems, kBlock>::kLoadSteps]) {
  using S = VecTile<kE, kTileElems, kBlock>;
  using I = typename G::Index;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int i = 0; i < S::kLoadSteps; ++i) {
    const int s = i * S::kWarps + warp;
    const int slot = (s % (S::kSlots / 8)) * 8 + (lane & 7), r = (s / (S::kSlots / 8)) * 4 + (lane >> 3);
    const I b = b0 + r, a = a0 + slot * S::kV;
    v[i] = make_uint4(0, 0, 0, 0);  // edge tiles: defined (never stored) values
    if (b < g.nb() && a < g.na()) {
      const I at = g.RowIn(b) + a;
      JK_DEVICE_ASSERT(at + S::kV <= g.elements());
      v[i] = __ldg(reinterpret_cast<const uint4*>(g.x() + at * kE));
    }
  }
}

template <int kE, int kTileElems, int kBlock>
__device__ __forceinline__ void Vec16ToSmem(const uint4 (&v)[VecTile<kE, kTileElems, kBlock>::kLoadSteps],
                                            unsigned char* tile) {
  using S = VecTile<kE, kTileElems, kBlock>;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int i = 0; i < S::kLoadSteps; ++i) {
    const int s = i * S::kWarps + warp;
    const int slot = (s % (S::kSlots / 8)) * 8 + (lane & 7), r = (s / (S::kSlots / 8)) * 4 + (lane >> 3);
    *reinterpret_cast<uint4*>(tile + SwizzledSlot<S>(r, slot)) = v[i];
  }
}

// Store: each warp step covers 4 groups of kP output rows x 8 slots of 16 bytes.
template <int kE, int kTileElems, int kBlock, typename G>
__device__ __forceinline__ void Vec16Store(const G& g, typename G::Index a0, typename G::Index b0,
                                           const unsigned char* tile) {
  using S = VecTile<kE, kTileElems, kBlock>;
  using Word = typename SmemWord<kE>::type;
  using I = typename G::Index;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
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
    const I b = b0 + slot * S::kV;
#pragma unroll
    for (int j = 0; j < S::kP; ++j) {
      const I a = a0 + og * S::kP + j;
      if (a < g.na() && b < g.nb()) {
        const I at = g.ColOut(a) + b;
        JK_DEVICE_ASSERT(at + S::kV <= g.elements());
        *reinterpret_cast<uint4*>(g.y() + at * kE) = o[j];
      }
    }
  }
}

// The type of one global access of kAccess bytes.
template <int kAccess>
struct AccessWord;
template <>
struct AccessWord<4> {
  using type = unsigned int;
};
template <>
struct AccessWord<8> {
  using type = uint2;
};

// ---- narrow accesses (ragged shapes) ------------------------------------------------------------------------
// Sides that are not multiples of 16 bytes (int8 8200 x 8200, bfloat16 8194 x 8194) keep this tile, its steps and its
// register transposes, with global accesses of kAccess = 8 or 4 bytes: the launcher checks that both groups and both
// buffers are multiples of kAccess, so an access is wholly inside the array or wholly outside. A 16-byte slot of a
// thread becomes 16 / kAccess pieces, and the pieces are placed so that every instruction's accesses are contiguous:
// the load step's 4 rows x 128 bytes as 16 / kAccess runs of 32 accesses, and on the store side a lane's pieces
// kPieceElems rows of B apart from their neighbours' (8 lanes write 8 * kAccess contiguous bytes of an output row).
// The swizzle keys on the piece (SwizzledSlot's kKey = kPieceElems): the column reads of 8 lanes, kPieceElems rows
// apart, hit 8 slots. Splitting each lane's 16-byte slot in place instead left every instruction's accesses 16 bytes
// apart; H200 (session 37 calls 1-2), in place -> contiguous: int8 8200^2 60.9 -> 57.3 us (jnp 56.7), 8196^2 (4-byte)
// 71.2 -> 68.3 (jnp 54.2), bfloat16 8194^2 127.1 -> 108.7 (jnp 112.3).
template <typename S, int kAccess, int kE>
struct NarrowTile {
  static constexpr int kPieces = 16 / kAccess, kPieceElems = kAccess / kE;
  using W = typename AccessWord<kAccess>::type;
  // Load step i, piece h of this lane: tile row r and byte offset in the row.
  __device__ static void LoadPlace(int i, int h, int* r, int* byte) {
    const int lane = threadIdx.x & 31, s = i * S::kWarps + (threadIdx.x >> 5);
    const int f = (h * 32 + lane) * kAccess;  // inside the step's 4 rows x 128 bytes
    *r = (s / (S::kSlots / 8)) * 4 + f / 128;
    *byte = (s % (S::kSlots / 8)) * 128 + f % 128;
  }
  // Store step: the tile row of word k of this lane's column (slot group g), and the row of its piece k / kPieceElems.
  __device__ static int StoreRow(int g, int k) {
    return g * 8 * S::kV + ((k / kPieceElems) * 8 + (threadIdx.x & 7)) * kPieceElems + k % kPieceElems;
  }
};

template <int kAccess>
union SlotPieces {  // one thread's 16 bytes as its pieces
  uint4 v;
  typename AccessWord<kAccess>::type w[16 / kAccess];
};

template <int kE, int kTileElems, int kBlock, int kAccess, typename G>
__device__ __forceinline__ void NarrowAccessTile(const G& g, typename G::Index a0, typename G::Index b0,
                                                 unsigned char* tile) {
  using S = VecTile<kE, kTileElems, kBlock>;
  using N = NarrowTile<S, kAccess, kE>;
  using W = typename N::W;
  using Word = typename SmemWord<kE>::type;
  using I = typename G::Index;
  SlotPieces<kAccess> v[S::kLoadSteps];
#pragma unroll
  for (int i = 0; i < S::kLoadSteps; ++i) {  // all loads first: kLoadSteps x kPieces requests in flight
#pragma unroll
    for (int h = 0; h < N::kPieces; ++h) {
      int r, byte;
      N::LoadPlace(i, h, &r, &byte);
      const I b = b0 + r, a = a0 + byte / kE;
      v[i].w[h] = W{};  // edge tiles: defined (never stored) values
      if (b < g.nb() && a < g.na()) {
        const I at = g.RowIn(b) + a;
        JK_DEVICE_ASSERT(at + N::kPieceElems <= g.elements());
        v[i].w[h] = __ldg(reinterpret_cast<const W*>(g.x() + at * kE));
      }
    }
  }
#pragma unroll
  for (int i = 0; i < S::kLoadSteps; ++i) {
#pragma unroll
    for (int h = 0; h < N::kPieces; ++h) {
      int r, byte;
      N::LoadPlace(i, h, &r, &byte);
      *reinterpret_cast<W*>(tile + SwizzledSlot<S, N::kPieceElems>(r, byte >> 4) + (byte & 15)) = v[i].w[h];
    }
  }
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int i = 0; i < S::kStoreSteps; ++i) {
    const int s = i * S::kWarps + warp;
    const int grp = s % (S::kSlots / 8), og = (s / (S::kSlots / 8)) * 4 + (lane >> 3);
    const int byte = og * S::kP * kE;  // this lane's column word inside a tile row
    Word w[S::kV];
#pragma unroll
    for (int k = 0; k < S::kV; ++k) {
      const int r = N::StoreRow(grp, k);
      w[k] = *reinterpret_cast<const Word*>(tile + SwizzledSlot<S, N::kPieceElems>(r, byte >> 4) + (byte & 15));
    }
    SlotPieces<kAccess> o[S::kP];
    uint4 packed[S::kP];
    PackRows(w, packed);
#pragma unroll
    for (int j = 0; j < S::kP; ++j) o[j].v = packed[j];
#pragma unroll
    for (int j = 0; j < S::kP; ++j) {
      const I a = a0 + og * S::kP + j;
#pragma unroll
      for (int h = 0; h < N::kPieces; ++h) {
        const I b = b0 + N::StoreRow(grp, h * N::kPieceElems);
        if (a < g.na() && b < g.nb()) {
          const I at = g.ColOut(a) + b;
          JK_DEVICE_ASSERT(at + N::kPieceElems <= g.elements());
          *reinterpret_cast<W*>(g.y() + at * kE) = o[j].w[h];
        }
      }
    }
  }
}

// kAccess 16: the 16-byte tile; 8 or 4: NarrowAccessTile.
template <int kE, int kTileElems, int kBlock, int kAccess = 16, typename G>
__device__ __forceinline__ void Vec16Tile(const G& g, typename G::Index a0, typename G::Index b0,
                                          unsigned char* tile) {
  if constexpr (kAccess == 16) {
    uint4 v[VecTile<kE, kTileElems, kBlock>::kLoadSteps];
    Vec16Load<kE, kTileElems, kBlock>(g, a0, b0, v);
    Vec16ToSmem<kE, kTileElems, kBlock>(v, tile);
    __syncthreads();
    Vec16Store<kE, kTileElems, kBlock>(g, a0, b0, tile);
  } else {
    NarrowAccessTile<kE, kTileElems, kBlock, kAccess>(g, a0, b0, tile);
  }
}

// Tiles over 48 KB (the static limit) live in dynamic shared memory: the launcher passes the size and
// raises cudaFuncAttributeMaxDynamicSharedMemorySize. The CPU emulator substitutes a host buffer.
inline constexpr int kMaxStaticSmem = 48 * 1024;
template <int kBytes>
__device__ __forceinline__ unsigned char* TileSmem() {
  if constexpr (kBytes <= kMaxStaticSmem) {
    __shared__ __align__(16) unsigned char tile[kBytes];
    return tile;
  } else {
#ifdef JK_EMULATOR_DYNAMIC_SMEM
    return JK_EMULATOR_DYNAMIC_SMEM;
#else
    extern __shared__ __align__(16) unsigned char dynamic_tile[];
    return dynamic_tile;
#endif
  }
}
template <int kE, int kTileElems>
inline constexpr int kDynamicSmemBytes = kTileElems * kTileElems * kE > kMaxStaticSmem ? kTileElems * kTileElems * kE : 0;

// General flavour: grid-stride over the tiles (gridDim.x is capped), 64-bit offsets.
template <int kE, int kTileElems = VecTile<kE>::kTile, int kBlock = 256, int kAccess = 16>
__global__ void __launch_bounds__(kBlock) TiledVec16Swizzled(TiledArgs p) {
  unsigned char* tile = TileSmem<kTileElems * kTileElems * kE>();
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    int64_t ta, tb, bin, bout;
    TileCoords(p, t, &ta, &tb, &bin, &bout);
    Vec16Tile<kE, kTileElems, kBlock, kAccess>(Geometry64{p, bin, bout}, ta * kTileElems, tb * kTileElems, tile);
    __syncthreads();  // the next tile overwrites `tile`
  }
}

// Compact flavour: one tile per block, in either tile order, on a 1-D grid or a grid of tiles (kTileGrid: CompactTile).
template <int kE, int kTileElems, int kBlock, bool kSplit, bool kBFastest = false, int kAccess = 16,
          bool kTileGrid = false>
__global__ void __launch_bounds__(kBlock) TiledVec16SwizzledCompact(TiledArgs32 p) {
  __shared__ __align__(16) unsigned char tile[kTileElems * kTileElems * kE];
  uint32_t a0, b0;
  const auto g = CompactTile<kSplit, kBFastest, kTileGrid>(p, &a0, &b0, kTileElems);
  Vec16Tile<kE, kTileElems, kBlock, kAccess>(g, a0, b0, tile);
}

// ---- kTiledScalarPadded ------------------------------------------------------------------------
// 64x64 tile, 16 rows per thread (256 threads): the fastest of the lab sweep on 4097x1023 float32 on
// the H200 (1955 GB/s against 1767 for 32x32 / 8 rows and 1516 for the classic 32x32 / 4 rows).
template <int kTileElems = 64, int kRows = 16>
struct PaddedTile {
  static constexpr int kTile = kTileElems, kRowsPerThread = kRows, kThreads = kTile * kTile / kRows;
};

// How each side of a padded tile moves (kIn for x, kOut for y; 1- and 2-byte elements, ragged shapes): kElemSide one
// element an access; kVecSide 16-byte vectors where that side's rows are 16-byte aligned (loads written to the tile as
// 4-byte words: padded rows are 4-byte aligned; stores gathered from a tile column by one element reads); kWordSide
// (1-byte elements, the buffer 4-byte aligned: the launcher checks) the aligned 4-byte words that cover an odd row:
// loads shift each row's misalignment out in registers (a funnel shift with the next lane's word), so the tile holds
// aligned rows. Word stores of odd y rows (each aligned output word's 4 bytes gathered from the tile, a row's partial
// edge words byte by byte) lost to element stores on the H200 (session 38 call 1, us): int8 (8193, 8192) 105.2 against
// 92.3, 8193x8191 144.9 against 138.0, 4097x1023 7.10 against 5.49, (1001, 4096) 5.76 against 4.16; removed.
enum PaddedSide { kElemSide = 0, kVecSide = 1, kWordSide = 2 };

// A 4-byte word of x at byte offset `off` (a multiple of 4); the bytes at or past `end` (x's size) read as zero, so the
// last word of an odd-sized x is read byte by byte.
template <typename I>
__device__ __forceinline__ uint32_t LoadWordBounded(const unsigned char* x, I off, int64_t end) {
  if (static_cast<int64_t>(off) + 4 <= end) return __ldg(reinterpret_cast<const uint32_t*>(x + off));
  uint32_t w = 0;
  for (int i = 0; i < 3; ++i) {
    if (static_cast<int64_t>(off) + i < end) w |= static_cast<uint32_t>(x[off + i]) << (8 * i);
  }
  return w;
}

template <typename T, int kTileElems, int kRows, int kPad, int kIn = kElemSide, int kOut = kElemSide, typename G>
__device__ __forceinline__ void PaddedTileBody(const G& g, typename G::Index a0, typename G::Index b0,
                                               T (*tile)[kTileElems + kPad]) {
  using I = typename G::Index;
  constexpr int kTile = kTileElems, kThreads = PaddedTile<kTileElems, kRows>::kThreads, kStep = kThreads / kTile;
  constexpr int kV = 16 / sizeof(T), kVecs = kTile * kTile / kV / kThreads;  // elements a vector, vectors a thread
  static_assert((kIn == kElemSide && kOut == kElemSide) || (sizeof(T) <= 2 && kVecs >= 1 && kPad * sizeof(T) % 4 == 0),
                "vector and word sides: 1- and 2-byte elements, rows padded by whole words");
  static_assert(kOut != kWordSide, "word sides: loads only (word stores lost, session 38)");
  const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;
  const T* x = reinterpret_cast<const T*>(g.x());
  T* y = reinterpret_cast<T*>(g.y());
  if constexpr (kIn == kWordSide) {
    // A tile row's kLW aligned words on kLW consecutive lanes: lane j loads word j of the covering words, takes word
    // j + 1 from the next lane (the last lane loads it), and shifts out the row's misalignment m.
    constexpr int kLW = kTile * sizeof(T) / 4, kRowsPerPass = kThreads / kLW, kPasses = kTile / kRowsPerPass;
    static_assert(kLW <= 32 && 32 % kLW == 0 && kTile % kRowsPerPass == 0, "a tile row's words within a warp");
    const int j = threadIdx.x % kLW, r0 = threadIdx.x / kLW;
    const int64_t end = g.elements() * static_cast<int64_t>(sizeof(T));
    uint32_t lo[kPasses], last[kPasses];
    int shift[kPasses];
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const I b = b0 + r0 + i * kRowsPerPass;
      lo[i] = 0, last[i] = 0, shift[i] = 0;
      if (b < g.nb()) {
        const I start = (g.RowIn(b) + a0) * static_cast<I>(sizeof(T));  // bytes
        const I bytes = (g.na() - a0 < kTile ? g.na() - a0 : kTile) * static_cast<I>(sizeof(T));
        const I m = start & 3, base = start - m;
        shift[i] = 8 * static_cast<int>(m);
        if (4 * j < m + bytes) lo[i] = LoadWordBounded(g.x(), static_cast<I>(base + 4 * j), end);
        if (j == kLW - 1 && 4 * kLW < m + bytes) last[i] = LoadWordBounded(g.x(), static_cast<I>(base + 4 * kLW), end);
      }
    }
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      uint32_t hi = __shfl_down_sync(0xffffffffu, lo[i], 1, kLW);
      if (j == kLW - 1) hi = last[i];
      *reinterpret_cast<uint32_t*>(&tile[r0 + i * kRowsPerPass][j * 4 / sizeof(T)]) =
          __funnelshift_r(lo[i], hi, shift[i]);
    }
  } else if constexpr (kIn == kVecSide) {  // a row's kTile / kV vectors on consecutive lanes
    uint4 v[kVecs];
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int idx = i * kThreads + threadIdx.x, r = idx / (kTile / kV), c = idx % (kTile / kV) * kV;
      const I b = b0 + r, a = a0 + c;
      v[i] = make_uint4(0, 0, 0, 0);
      if (b < g.nb() && a < g.na()) {  // na is a multiple of kV: a vector is wholly inside or outside
        const I at = g.RowIn(b) + a;
        JK_DEVICE_ASSERT(at + kV <= g.elements());
        v[i] = __ldg(reinterpret_cast<const uint4*>(x + at));
      }
    }
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int idx = i * kThreads + threadIdx.x, r = idx / (kTile / kV), c = idx % (kTile / kV) * kV;
      uint32_t* row = reinterpret_cast<uint32_t*>(&tile[r][c]);
      row[0] = v[i].x, row[1] = v[i].y, row[2] = v[i].z, row[3] = v[i].w;
    }
  } else {
    T v[kRows] = {};
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const I b = b0 + ty + i * kStep, a = a0 + tx;
      if (b < g.nb() && a < g.na()) {
        const I at = g.RowIn(b) + a;
        JK_DEVICE_ASSERT(at < g.elements());
        v[i] = x[at];
      }
    }
#pragma unroll
    for (int i = 0; i < kRows; ++i) tile[ty + i * kStep][tx] = v[i];
  }
  __syncthreads();
  if constexpr (kOut == kVecSide) {
    // An output row's kTile / kV vectors on consecutive lanes. Lanes along the tile's columns instead (column reads of
    // consecutive elements) scattered each instruction's 16-byte stores over 32 output rows: H200 (session 37 call 6),
    // bfloat16 (768, 50257) 284 us against 91 with element stores.
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int idx = i * kThreads + threadIdx.x, q = idx % (kTile / kV), c = idx / (kTile / kV);
      uint32_t w[4] = {0, 0, 0, 0};  // packed by shifts: a union of T[kV] went to local memory
#pragma unroll
      for (int k = 0; k < kV; ++k) {
        w[k * sizeof(T) / 4] |= static_cast<uint32_t>(tile[q * kV + k][c]) << (8 * sizeof(T) * k % 32);
      }
      const I a = a0 + c, b = b0 + q * kV;
      if (a < g.na() && b < g.nb()) {  // nb is a multiple of kV
        const I at = g.ColOut(a) + b;
        JK_DEVICE_ASSERT(at + kV <= g.elements());
        *reinterpret_cast<uint4*>(y + at) = make_uint4(w[0], w[1], w[2], w[3]);
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const I a = a0 + ty + i * kStep, b = b0 + tx;
      if (a < g.na() && b < g.nb()) {
        const I at = g.ColOut(a) + b;
        JK_DEVICE_ASSERT(at < g.elements());
        y[at] = tile[tx][ty + i * kStep];
      }
    }
  }
}

// kPad: the row padding in elements, one 4-byte word (sizeof(T) <= 4) so that the column reads of 32 lanes hit 32 banks:
// rows of 64 + 1 bytes put lanes tx and tx + 2 on one bank (2-way conflicts), 64 + 4 do not.
template <typename T>
inline constexpr int kPadElems = sizeof(T) >= 4 ? 1 : 4 / static_cast<int>(sizeof(T));

template <typename T, int kTileElems = 64, int kRows = 16, int kPad = kPadElems<T>, int kIn = kElemSide,
          int kOut = kElemSide>
__global__ void __launch_bounds__(PaddedTile<kTileElems, kRows>::kThreads) TiledScalarPadded(TiledArgs p) {
  __shared__ __align__(16) T tile[kTileElems][kTileElems + kPad];
  for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    int64_t ta, tb, bin, bout;
    TileCoords(p, t, &ta, &tb, &bin, &bout);
    PaddedTileBody<T, kTileElems, kRows, kPad, kIn, kOut>(Geometry64{p, bin, bout}, ta * kTileElems, tb * kTileElems,
                                                         tile);
    __syncthreads();
  }
}

template <typename T, int kTileElems, int kRows, bool kSplit, int kPad = kPadElems<T>, int kIn = kElemSide,
          int kOut = kElemSide, bool kTileGrid = false>
__global__ void __launch_bounds__(PaddedTile<kTileElems, kRows>::kThreads)
    TiledScalarPaddedCompact(TiledArgs32 p) {
  __shared__ __align__(16) T tile[kTileElems][kTileElems + kPad];
  uint32_t a0, b0;
  const auto g = CompactTile<kSplit, false, kTileGrid>(p, &a0, &b0, kTileElems);
  PaddedTileBody<T, kTileElems, kRows, kPad, kIn, kOut>(g, a0, b0, tile);
}

// ---- kTiledPaddedLean --------------------------------------------------------------------------
// The classic 32x33 tile, 8 rows a thread, for one-wave 2-D problems whose sides are multiples of 32 (no batch axis,
// no split group: the launcher checks). Every instruction in front of the loads is on the kernel's critical path
// here (the whole problem is one wave of ~8 CTAs an SM, ~2 us), so: no bounds checks, offsets in bytes (the row
// strides scaled once, no per-access scaling), the tile from a grid of tiles with x the tile index down x's rows (B)
// and y across them (A). H200, float32 2048x512, CUPTI best of 5 (session 39, bench/lab/s39_h200.md calls 2-4, lab
// kernels compiled from bench/lab/s39_transpose_ptx_lab.cu): this form 2.14 us against 2.19-2.21 with element
// strides or the other grid order, and 2.08 with the shape compiled in (XLA's 2.11-2.21, the register blocks'
// 2.21-2.24).
template <typename T>
__global__ void __launch_bounds__(128) TiledPaddedLean(TiledArgs32 p) {
  __shared__ T tile[32][33];
  const uint32_t tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  const uint32_t a0 = blockIdx.y * 32, b0 = blockIdx.x * 32;
  const uint32_t in_row = p.b_in * sizeof(T), out_row = p.a_out * sizeof(T);  // bytes
  const unsigned char* src = p.x + (b0 + ty) * in_row + (a0 + tx) * sizeof(T);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    JK_DEVICE_ASSERT((b0 + ty + 4 * i) * p.b_in + a0 + tx < p.elements);
    tile[tx][ty + 4 * i] = __ldg(reinterpret_cast<const T*>(src + i * 4 * in_row));
  }
  __syncthreads();
  unsigned char* dst = p.y + (a0 + ty) * out_row + (b0 + tx) * sizeof(T);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    JK_DEVICE_ASSERT((a0 + ty + 4 * i) * p.a_out + b0 + tx < p.elements);
    *reinterpret_cast<T*>(dst + i * 4 * out_row) = tile[ty + 4 * i][tx];
  }
}

// ---- kTiledRegisterBlocks ----------------------------------------------------------------------
// No shared memory, no barrier: each thread loads a kV x kV block (kV rows, one 16-byte access each),
// transposes it in registers (byte_perm for 1- and 2-byte elements) and stores kV 16-byte rows.
// kLanesA lanes of a warp cover a block row along A (input runs of kLanesA x 16 bytes), the other
// 32 / kLanesA lanes stack along B (output runs of 32 / kLanesA x 16 bytes); a block's warps continue
// along B. For latency-bound problems: one load round trip per thread and nothing between it and the
// stores but register moves.
template <int kE, int kLanesA, int kBlock>
struct RegTile {
  static constexpr int kV = 16 / kE;
  static constexpr int kTileA = kLanesA * kV;           // elements along A per block
  static constexpr int kTileB = kBlock / kLanesA * kV;  // elements along B per block
  static_assert(32 % kLanesA == 0 && kBlock % 32 == 0, "lanes along A must divide a warp");
};

// o[j] = column j of the kV x kV block whose rows are w[i] (4 words of 16 bytes each).
template <int kE>
__device__ __forceinline__ void TransposeBlock(const uint32_t (&w)[16 / kE][4], uint32_t (&o)[16 / kE][4]) {
  if constexpr (kE == 8) {
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int i = 0; i < 2; ++i) o[j][2 * i] = w[i][2 * j], o[j][2 * i + 1] = w[i][2 * j + 1];
  } else if constexpr (kE == 4) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) o[j][i] = w[i][j];
  } else if constexpr (kE == 2) {  // 2x2 half transposes of word pairs, then a 4x4 word transpose
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        o[2 * r][q] = __byte_perm(w[2 * q][r], w[2 * q + 1][r], 0x5410);
        o[2 * r + 1][q] = __byte_perm(w[2 * q][r], w[2 * q + 1][r], 0x7632);
      }
  } else {  // 4x4 byte transposes of word quads (as PackRows), then a 4x4 word transpose
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const uint32_t t0 = __byte_perm(w[4 * q][r], w[4 * q + 1][r], 0x5140);
        const uint32_t t1 = __byte_perm(w[4 * q][r], w[4 * q + 1][r], 0x7362);
        const uint32_t t2 = __byte_perm(w[4 * q + 2][r], w[4 * q + 3][r], 0x5140);
        const uint32_t t3 = __byte_perm(w[4 * q + 2][r], w[4 * q + 3][r], 0x7362);
        o[4 * r][q] = __byte_perm(t0, t2, 0x5410);
        o[4 * r + 1][q] = __byte_perm(t0, t2, 0x7632);
        o[4 * r + 2][q] = __byte_perm(t1, t3, 0x5410);
        o[4 * r + 3][q] = __byte_perm(t1, t3, 0x7632);
      }
  }
}

// Compact geometry, tiles_a / tiles_b counted in RegTile blocks. Requires na % kV == 0, nb % kV == 0
// and 16-byte aligned buffers (as kTiledVec16Swizzled): a thread's block is wholly inside or outside.
// kTileGrid: the block's coordinates from a grid of blocks (A, B, batch), as CompactTile's.
template <int kE, int kLanesA, int kBlock, bool kSplit, bool kTileGrid = false>
__global__ void __launch_bounds__(kBlock) TiledRegisterBlocks(TiledArgs32 p) {
  using S = RegTile<kE, kLanesA, kBlock>;
  constexpr int kV = S::kV;
  const uint32_t t = blockIdx.x, rest = kTileGrid ? 0 : t / p.tiles_a;
  const uint32_t batch = kTileGrid ? blockIdx.z : rest / p.tiles_b;
  const Geometry32<kSplit> g{p, batch * p.batch_in, batch * p.batch_out};
  const uint32_t a = (kTileGrid ? t : t - rest * p.tiles_a) * S::kTileA + (threadIdx.x % kLanesA) * kV;
  const uint32_t b = (kTileGrid ? blockIdx.y : rest - batch * p.tiles_b) * S::kTileB + (threadIdx.x / kLanesA) * kV;
  if (a >= p.na || b >= p.nb) return;
  uint32_t w[kV][4], o[kV][4];
#pragma unroll
  for (int i = 0; i < kV; ++i) {
    const uint32_t at = g.RowIn(b + i) + a;
    JK_DEVICE_ASSERT(at + kV <= g.elements());
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(p.x + static_cast<size_t>(at) * kE));
    w[i][0] = v.x, w[i][1] = v.y, w[i][2] = v.z, w[i][3] = v.w;
  }
  TransposeBlock<kE>(w, o);
#pragma unroll
  for (int j = 0; j < kV; ++j) {
    const uint32_t at = g.ColOut(a + j) + b;
    JK_DEVICE_ASSERT(at + kV <= g.elements());
    *reinterpret_cast<uint4*>(p.y + static_cast<size_t>(at) * kE) = make_uint4(o[j][0], o[j][1], o[j][2], o[j][3]);
  }
}

// ---- kRowCopy ----------------------------------------------------------------------------------
// V is the access (uint4 for 16-byte runs, else the element). kUnroll accesses per thread in flight.
// Output order (kInputOrder = false): writes are fully contiguous and each access finds its input run
// by decomposing its output row index (`rows` in output order, `in` strides in bytes). Input order:
// the launcher lists `rows` in input order with `out` strides in bytes, reads are contiguous and each
// access finds its output run instead.
// Accesses a thread: 4 for element accesses (8 was slower, bench/lab/transpose_results_h200.md); 16-byte ones 2 in
// input order (CTAs of 256) and, since session 35, 1 in output order (CTAs of 128, XLA's elementwise shape) with
// kFastDiv: the two together (the launcher's LaunchRowCopy has the figures).
// kFastDiv (I = uint32_t): the launcher's precomputed divisors (RowArgs::row_div, dim_div) instead of division
// instructions, so that an access's load is not queued behind ~20 instructions an axis.
inline constexpr int kRowCopyUnroll = 4;
template <typename V, typename I, bool kInputOrder, int kThreads, int kUnroll, bool kFastDiv>  // LaunchRowCopyShape
__global__ void __launch_bounds__(kThreads) RowCopy(RowArgs p) {
  static_assert(!kFastDiv || std::is_same_v<I, uint32_t>, "fast division is 32-bit");
  const I total = static_cast<I>(p.total_vecs), row_vecs = static_cast<I>(p.row_vecs);
  const I stride = static_cast<I>(gridDim.x) * blockDim.x * kUnroll;
  for (I base = static_cast<I>(blockIdx.x) * blockDim.x * kUnroll + threadIdx.x; base < total;
       base += stride) {
    V v[kUnroll];
    int64_t to[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const I g = base + u * blockDim.x;
      if (g < total) {
        int64_t in, out;
        I row;
        if constexpr (kFastDiv) {
          row = p.row_div.Div(g);
          DecomposeFast(p.rows, p.dim_div, row, &in, &out);
        } else {
          row = g / row_vecs;
          Decompose<I>(p.rows, row, &in, &out);
        }
        const I col = g - row * row_vecs;
        const int64_t run = static_cast<int64_t>(col) * sizeof(V);
        if (kInputOrder) {
          to[u] = out + run;
          v[u] = reinterpret_cast<const V*>(p.x)[g];
        } else {
          const int64_t at = in + run;
          JK_DEVICE_ASSERT(at >= 0 && at + static_cast<int64_t>(sizeof(V)) <= p.bytes);
          v[u] = *reinterpret_cast<const V*>(p.x + at);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const I g = base + u * blockDim.x;
      if (g >= total) continue;
      if (kInputOrder) {
        JK_DEVICE_ASSERT(to[u] >= 0 && to[u] + static_cast<int64_t>(sizeof(V)) <= p.bytes);
        *reinterpret_cast<V*>(p.y + to[u]) = v[u];
      } else {
        reinterpret_cast<V*>(p.y)[g] = v[u];
      }
    }
  }
}

// ---- kRowCopyLean (session 35) --------------------------------------------------------------------------------
// The output-order 16-byte row copy in the form of XLA's elementwise kernels: one access a thread, one pass (no
// grid-stride loop), 32-bit indices divided by precomputed multipliers, at most kRowLeanMaxAxes row axes, only the
// input offset computed. RowCopy's general form (16 axes behind guards, both offsets, the loop) cost 0.4-1 us more on
// 67 MB (bench/lab/s35_h200.md call 14 against call 4's lab kernel); the launcher takes this one where it fits.
// kInputOrder (session 36): the same walk over the input (x read in order, each access's output offset computed, y
// written as scattered runs), which the launcher's input-order walk (runs of up to 256 bytes) takes where it fits.
inline constexpr int kRowLeanMaxAxes = 4;
struct RowLeanArgs {
  const unsigned char* x;
  unsigned char* y;
  uint32_t total;     // 16-byte accesses of the array
  uint32_t row_vecs;  // accesses a run
  FastDivU32 row_div;
  int n;  // row axes of the walked side, innermost first
  uint32_t dim[kRowLeanMaxAxes];
  FastDivU32 div[kRowLeanMaxAxes];
  int64_t stride[kRowLeanMaxAxes];  // the other side's strides in bytes (x's in output order, y's in input order)
  int64_t bytes;                    // of x and of y: only read by the JK_DEBUG_BOUNDS assertions
};
template <int kThreads, bool kInputOrder = false>
__global__ void __launch_bounds__(kThreads) RowCopyLean(const __grid_constant__ RowLeanArgs p) {
  const uint32_t g = blockIdx.x * kThreads + threadIdx.x;
  if (g >= p.total) return;
  uint32_t row = p.row_div.Div(g);
  int64_t at = static_cast<int64_t>(g - row * p.row_vecs) * 16;
#pragma unroll
  for (int k = 0; k < kRowLeanMaxAxes; ++k) {
    if (k < p.n) {
      const uint32_t q = p.div[k].Div(row);
      at += static_cast<int64_t>(row - q * p.dim[k]) * p.stride[k];
      row = q;
    }
  }
  JK_DEVICE_ASSERT(at >= 0 && at + 16 <= p.bytes);
  if constexpr (kInputOrder) {
    *reinterpret_cast<uint4*>(p.y + at) = reinterpret_cast<const uint4*>(p.x)[g];
  } else {
    reinterpret_cast<uint4*>(p.y)[g] = *reinterpret_cast<const uint4*>(p.x + at);
  }
}

}  // namespace jk::transpose
