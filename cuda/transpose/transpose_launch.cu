// Tier choice for the transpose plans (see transpose_kernels.cuh for the kernels).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "common/launch.h"
#include "common/tma_host.h"
#include "transpose/transpose_kernels.cuh"
#include "transpose/transpose_launch.h"
#include "transpose/transpose_bulk_kernels.cuh"
#include "transpose/transpose_rowtile_kernels.cuh"
#include "transpose/transpose_small_kernels.cuh"

namespace jk {
namespace {

using transpose::RowArgs;
using transpose::TiledArgs;
using transpose::TiledArgs32;

// Grid-stride kernels: past this many blocks each block loops, so gridDim.x never overflows.
constexpr int64_t kMaxBlocks = int64_t{1} << 20;

inline bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Tile configurations per element size, from the lab sweeps on an H200 (bench/results/transpose_h200.md,
// bench/lab/transpose_results_h200.md). kBig: tile side (elements) and block size for problems of
// several waves; rows of 256 bytes beat 128 (e.g. bfloat16 3860 GB/s with 128x128 tiles against 3399
// with 64x64). kGeneralThreads: the big tile's block size in the general flavour (inputs over 32 MiB);
// 512 threads for 2-byte elements (bfloat16 8192^2 69.7 against 70.3 us, 16384^2 271.1 against 273.6),
// while 4-byte elements lost 6-11% with 512. kSmall: problems with fewer big tiles than kSmallWaves x
// SMs take a smaller tile, so that every SM gets blocks (2-byte: 256 threads, 2048x512 1.76 against
// 1.82 us with 128); kSmallRegisterBlocks: the small tier runs kTiledRegisterBlocks instead (4-byte:
// 2048x512 2.34 against 2.40 us, 8x16x32x64x2 (4,0,3,1,2) 1.98 against 2.05; 1- and 2-byte elements
// lost, e.g. int8 2048x512 1.98 against 1.66 us).
template <int kE>
struct TiledConfig;
template <>
struct TiledConfig<1> {
  static constexpr int kBigTile = 128, kBigThreads = 256, kGeneralThreads = 256;
  static constexpr int kWideTile = 256, kWideThreads = 512;
  static constexpr int kSmallTile = 128, kSmallThreads = 256;
  static constexpr bool kSmallRegisterBlocks = false;
  // Element accesses (ragged shapes): 64x64 tiles, 16 rows a thread, as the 4- and 8-byte ones. H200, session 37 call 1
  // (CUPTI, best of 3), 64x65 against 32x33 tiles of 8 rows: int8 8193x8191 153.3 against 184.1 us, 4097x1023 5.70
  // against 6.02; bfloat16 8193x8191 157.1 against 194.6, (50257, 768) 91.4 against 113.6, 4097x1023 6.62 against 6.66.
  // Rows are padded by a 4-byte word (kPadElems: 64x68 bytes, 64x66 halves), which tied with 64x65 (call 3).
  static constexpr int kPadTile = 64, kPadRows = 16;
};
template <>
struct TiledConfig<2> {
  static constexpr int kBigTile = 128, kBigThreads = 256, kGeneralThreads = 512;
  static constexpr int kWideTile = 0;  // no wide tile
  static constexpr int kSmallTile = 64, kSmallThreads = 256;
  static constexpr bool kSmallRegisterBlocks = false;
  static constexpr int kPadTile = 64, kPadRows = 16;  // as 1-byte elements
};
template <>
struct TiledConfig<4> {
  static constexpr int kBigTile = 64, kBigThreads = 256, kGeneralThreads = 256;
  static constexpr int kWideTile = 0;  // no wide tile
  static constexpr int kSmallTile = 32, kSmallThreads = 128;
  static constexpr bool kSmallRegisterBlocks = true;
  static constexpr int kPadTile = 64, kPadRows = 16;
};
template <>
struct TiledConfig<8> {
  static constexpr int kBigTile = 32, kBigThreads = 128, kGeneralThreads = 128;
  static constexpr int kWideTile = 0;  // no wide tile
  static constexpr int kSmallTile = 32, kSmallThreads = 128;
  static constexpr bool kSmallRegisterBlocks = false;
  static constexpr int kPadTile = 64, kPadRows = 16;
};
constexpr int64_t kSmallWaves = 2;
// kWideTile: large 1-byte problems with at least this many 256x256 tiles per SM take the 256x256-byte tile
// (64 KB of dynamic shared memory, 512 threads): rows of 256 bytes on both sides, as the 2- and 4-byte big
// tiles. H200 (bench/lab/transpose_results_h200.md, round 2): int8 16384^2 (4096 tiles, 31 per SM) 143.9 ->
// 138.3 us, 86.8 -> 90.3% of copy; 8192^2 (1024 tiles, 7.8 per SM) tied (36.7 against 36.8 us), so it
// keeps the 128x128 tile. 256 threads (98 registers) and a resident-size persistent grid were slower.
// Sizes between the two (64 and 256 MiB of input) were not measured.
constexpr int64_t kWideTileWaves = 16;
// Register blocks: lanes along A (transpose_kernels.cuh) and CTA size. H200, float32 2048x512 (session 38 calls 1-2,
// best of 5, us): CTAs of 32 / 64 / 256 threads 2.66 / 2.38 / 2.37 against 2.34 at 128 on the 1-D grid, and on the grid
// of tiles 2.53 / 2.24 / 2.24 against 2.21-2.24; 2 and 8 lanes along A 2.56 / 2.75 against 2.21 (slower in earlier
// sessions too); 2 or 4 of the 4 warps side by side along A (blocks of 32 x 64 or 64 x 32 elements, not 16 x 128) and
// the swizzled 32x32 tile all 2.21-2.24 (call 6, best of 7): that shape sits at ~2.21 us whatever the block.
constexpr int kRegisterBlockLanes = 4;
constexpr int kRegisterBlockThreads = 128;

// Row copies of 16-byte accesses whose runs are at most this long walk the input in order (reads
// contiguous, 16-byte-aligned runs written scattered): (32, 128, 64, 64) bfloat16 (0, 2, 1, 3), 128-byte
// runs, 17.9 against 18.9 us in output order. Longer runs were not measured. Precomputed (multiply-shift)
// divisors with 32-bit offsets did not help there (18.06 against 17.95 us): not bound by index math. Session 35 (call
// 5, % of copy) put output order at its new 128 x 1 form with divisors ("rcout"), and it lost again: 128-byte runs
// 85.3% against 89.3%, 64-byte (64, 512, 32, 16) float32 88.3% against 94.8%, 256-byte (16, 256, 32, 128) bfloat16
// 87.6% against 89.8%. Its lean form (kRowCopyLean, call 15) turned that around from 128 bytes: the attention permute
// (32, 128, 64, 64) bfloat16 90.0% against the tiled row copy's 88.5% and input order's 88.7%, 256-byte runs 91.9%
// against 89.7%; it lost (8, 32, 2048, 64) float16's 128-byte runs (92.4% against the tiled 93.3%; input order 92.4%)
// and 64-byte runs (92.4% against 95.6%). Session 36 (bench/lab/s36_h200.md call 5, same method) walked the input on
// the lean form too ("rcinlean"), and it beat each run length's default: 64 bytes 95.2% -> 96.1%, 96 bytes (64, 512,
// 16, 24) float32 92.3% -> 94.2% (input order 256 x 2 before), 128 bytes 90.3% -> 91.2% (the attention permute) and
// 92.4% -> 93.7% ((8, 32, 2048, 64) float16), 256 bytes 92.0% -> 92.3% (lean output order before); 32-byte runs keep
// their staged tiles (92.6% against 90.3% unstaged). So runs of 16-256 bytes walk the input in order (16 and 32 staged
// as tiles, RowTileDefaultRun), longer runs the output; both on the lean form where it fits (LaunchRowCopy).
constexpr int64_t kRowCopyInputOrderMaxRun = 256;

template <int kE>
using Storage = std::conditional_t<kE == 1, uint8_t,
                std::conditional_t<kE == 2, uint16_t, std::conditional_t<kE == 4, uint32_t, uint64_t>>>;

// Problems that read at most this many bytes take the compact flavour (transpose_kernels.cuh) when its
// conditions hold. Measured on an H200 (bench/lab/transpose_results_h200.md): it cuts 0.6-4 us from
// problems that move 2-34 MB (2048x512 float32 3.52 -> 2.37 us, 4097x1023 float32 13.4 -> 9.3 us),
// but loses 6-8% on large 2-byte ones (bfloat16 8192x8192 70.6 -> 75.0 us; probably occupancy: 40
// registers instead of 64 let 6 blocks per SM in instead of 4, and the 128x128 tile was tuned at 4),
// so large, bandwidth-bound problems keep the general kernels. Inputs between 17 and 67 MB were not
// measured; 32 MiB read is the issue's 64 MB "large" line (input + output). 1-byte elements are the
// exception (LaunchTiled, compact_large).
constexpr int64_t kCompactMaxBytes = int64_t{32} << 20;

// JK_TRANSPOSE_TIERS (lab knob, re-read at every launch so one process can time every setting; with XLA
// command buffers off, or a captured graph keeps the setting it was captured with): comma-separated tokens.
// "old" forces the session-1 dispatch (general flavour only); "s2" the session-2 one (no register blocks,
// 128-thread small and 256-thread general 2-byte tiles, row copies in output order); "compact" takes the
// compact flavour at any size it allows; "reg" the register-block kernel wherever it applies, at any size;
// "r1" the session-3 round-1 dispatch (large 1-byte transposes on the 128x128 tile, no 256x256 tile).
// Session 4 (bench/lab/transpose_s4_h200.md; both lost, lab tokens only): "smallcta" the kTiledSmallCta
// tier wherever the compact flavour and its access width allow; "rowbulk" short row copies on the bulk
// copy engine (sm_90, transpose_bulk_kernels.cuh). "s3" the session-3 dispatch (1-byte transposes over
// 32 MiB that do not take the 256x256 tile run the general flavour, not the compact one). "afast" (session
// 18) walks big tiles A fastest, as before it (BigTilesBFastest). "rowtma" / "rowtma16" (session 32) short row
// copies as boxes of two tensor maps, about 8 / 16 KB a box (LaunchRowCopyTensor). "rowtile4k" / "rowtile8k" /
// "rowtile16k" (session 33) short row copies as tiles of about 4 / 8 / 16 KB staged in shared memory (LaunchRowTile),
// "rowtilea" their tiles in A-fastest order (the default rule's order), "norowtile" never the tiled row copy,
// "rowtilep" a resident grid looping over the tiles. Session 35 (LaunchRowCopy): "rc256x2" the output-order 16-byte
// row copy as in session 34 (256 threads x 2 accesses, division instructions), "rcslow" its 128 x 1 shape with
// division instructions, "rcin128" the input-order one at 128 x 1 with precomputed divisors (lost); "rcout" 16-byte
// runs of up to kRowCopyInputOrderMaxRun bytes in output order. Session 36: "rcinlean" input order at any run length;
// "wide" / "wide1k" 1-byte big tiles on the 256x256 tile from two waves of them (512 / 1024 threads) and "big128t" the
// compact 1-byte big tile at 128 threads, all three lost (bench/lab/s36_h200.md calls 3 and 9). Session 37: "scalarodd"
// ragged shapes on the padded element-access tiles (LaunchTiled), "pad32" 1- and 2-byte ones on 32x33 tiles
// (TiledConfig), "pad1" on 64x65 (64 elements and one of padding) tiles, "padvec0" without a 16-byte side on them,
// "padword0" without word loads of odd rows (PaddedSidesFor). Session 38: "grid3" / "grid1" (TileGridFor).
// Session 39: "nolean" no kTiledPaddedLean (its "xla32", the checked 32x33 padded tile there, lost and was removed).
// bench/lab/transpose_s4.py times settings against the default in one process. Unset: the dispatch below.
struct TierKnobs {
  bool old = false, s2 = false, compact = false, reg = false, r1 = false, s3 = false, smallcta = false,
       rowbulk = false;
  int rowtma = 0;  // "rowtma" / "rowtma16" (session 32): short row copies as 8 / 16 KB tensor-map boxes (sm_90)
  int rowtile = 0;  // "rowtile4k" / "rowtile8k" / "rowtile16k" (session 33): tiled row copies of 4 / 8 / 16 KB
  bool rowtilea = false, norowtile = false;  // "rowtilea": A-fastest tile order; "norowtile": no tiled row copy
  bool rowtilep = false;  // "rowtilep": the tiled row copy on a resident grid (8 CTAs an SM) looping over its tiles
  bool afast = false;  // "afast": big tiles in the order before session 18 (A fastest, TileCoords)
  bool nonarrow = false;  // "nonarrow": no kTiledNarrow (session 19), the square tiles for a short side too
  bool narrowscalar = false;  // "narrowscalar": kTiledNarrow with element accesses only
  bool rc256x2 = false, rcslow = false, rcout = false, rcin128 = false, rclean0 = false;  // session 35: LaunchRowCopy
  bool rcinlean = false;  // session 36: "rcinlean" 16-byte runs of any length in input order
  int wide = 0;  // session 36: "wide" / "wide1k" 1-byte big tiles on the 256x256 tile at any size, 512 / 1024 threads
  bool wideasync = false;  // session 36: "wideasync" the 256x256 tile's loads as cp.async copies (sm_90 builds)
  bool pad32 = false;  // session 37: "pad32" 1- and 2-byte element-access tiles of 32x33 (8 rows a thread), not 64x68
  bool pad1 = false;  // session 37: "pad1" 1- and 2-byte element-access tiles of 64x65 (one element of pad), not 64x68
  bool padvec0 = false;  // session 37: "padvec0" no 16-byte side on the padded tiles (PaddedSidesFor)
  bool padword0 = false;  // session 37: "padword0" no word loads of odd rows on the padded tiles (PaddedSidesFor)
  bool big128t = false;  // session 36: "big128t" the compact 1-byte big tile (128x128) with 128 threads instead of 256
  bool scalarodd = false;  // session 37: "scalarodd" ragged shapes on element-access padded tiles (LaunchTiled)
  bool grid3 = false, grid1 = false;  // session 38: compact tiles on a grid of tiles with a batch axis too / never
  bool nolean = false;  // session 39: "nolean" no kTiledPaddedLean (LaunchPaddedLean): the register blocks there
};
TierKnobs ParseKnobs(const char* env) {
  TierKnobs t;
  for (const char* s = env; s != nullptr && *s != '\0';) {
    const char* e = std::strchr(s, ',');
    const size_t n = e ? static_cast<size_t>(e - s) : std::strlen(s);
    auto is = [&](const char* w) { return std::strlen(w) == n && std::strncmp(s, w, n) == 0; };
    t.old |= is("old"), t.s2 |= is("s2"), t.compact |= is("compact"), t.reg |= is("reg");
    t.r1 |= is("r1"), t.s3 |= is("s3"), t.smallcta |= is("smallcta"), t.rowbulk |= is("rowbulk");
    t.afast |= is("afast"), t.nonarrow |= is("nonarrow"), t.narrowscalar |= is("narrowscalar");
    if (is("rowtma")) t.rowtma = 8192;
    if (is("rowtma16")) t.rowtma = 16384;
    if (is("rowtile4k")) t.rowtile = 4;
    if (is("rowtile8k")) t.rowtile = 8;
    if (is("rowtile16k")) t.rowtile = 16;
    t.rc256x2 |= is("rc256x2"), t.rcslow |= is("rcslow"), t.rcout |= is("rcout"), t.rcin128 |= is("rcin128");
    t.rclean0 |= is("rclean0"), t.scalarodd |= is("scalarodd");
    t.rcinlean |= is("rcinlean"), t.big128t |= is("big128t"), t.wideasync |= is("wideasync"), t.pad32 |= is("pad32");
    t.pad1 |= is("pad1"), t.padvec0 |= is("padvec0"), t.padword0 |= is("padword0");
    t.grid3 |= is("grid3"), t.grid1 |= is("grid1"), t.nolean |= is("nolean");
    if (is("wide")) t.wide = 512;
    if (is("wide1k")) t.wide = 1024;
    t.rowtilea |= is("rowtilea"), t.norowtile |= is("norowtile"), t.rowtilep |= is("rowtilep");
    s = e ? e + 1 : s + n;
  }
  return t;
}
// Per host thread (FFI handlers of several devices may run concurrently): re-parsed when the variable changes.
const TierKnobs& Knobs() {
  thread_local std::string last;
  thread_local TierKnobs cached;
  const char* env = std::getenv("JK_TRANSPOSE_TIERS");
  const char* now = env ? env : "";
  if (last != now) last = now, cached = ParseKnobs(now);
  return cached;
}

// Big tiles (several waves) go B fastest (TileCoords has the measurements); the older dispatches replayed by
// the lab knobs, and "afast", keep A fastest.
bool BigTilesBFastest() {
  const TierKnobs& k = Knobs();
  return !k.afast && !k.old && !k.s2 && !k.r1 && !k.s3;
}

template <int kTile>
int64_t CountTiles(TiledArgs* a) {
  a->tiles_a = CeilDiv(a->na, kTile);
  a->tiles_b = CeilDiv(a->nb, kTile);
  a->tiles = a->tiles_a * a->tiles_b * a->batch.Size();
  return a->tiles;
}

// ---- general flavour (64-bit, any number of grouped / batch axes) ----
template <int kE, int kTile, int kThreads, int kAccess = 16>
cudaError_t LaunchVec16(cudaStream_t stream, TiledArgs a) {
  constexpr int kSmem = transpose::kDynamicSmemBytes<kE, kTile>;
  auto kernel = &transpose::TiledVec16Swizzled<kE, kTile, kThreads, kAccess>;
  if constexpr (kSmem > 0) {  // tiles over 48 KB: an opt-in, a host-side attribute (legal under capture)
    const cudaError_t e =
        cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    if (e != cudaSuccess) return e;
  }
  const int blocks = static_cast<int>(std::min(CountTiles<kTile>(&a), kMaxBlocks));
  kernel<<<blocks, kThreads, kSmem, stream>>>(a);
  return LastLaunchError();
}

// Lab ("wideasync"): LaunchVec16 with the tile's loads as cp.async copies (transpose_bulk_kernels.cuh).
template <int kE, int kTile, int kThreads>
cudaError_t LaunchVec16Async(cudaStream_t stream, TiledArgs a) {
  constexpr int kSmem = transpose::kDynamicSmemBytes<kE, kTile>;
  auto kernel = &transpose::TiledVec16SwizzledAsync<kE, kTile, kThreads>;
  if constexpr (kSmem > 0) {
    const cudaError_t e =
        cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    if (e != cudaSuccess) return e;
  }
  const int blocks = static_cast<int>(std::min(CountTiles<kTile>(&a), kMaxBlocks));
  kernel<<<blocks, kThreads, kSmem, stream>>>(a);
  return LastLaunchError();
}

// Whether LaunchTiledGeneral (16-byte accesses) would take the 256x256-byte tile.
template <int kE>
bool TakesWideTile(TiledArgs a) {
  using C = TiledConfig<kE>;
  if constexpr (C::kWideTile > 0) {
    const int64_t waves = Knobs().wide ? kSmallWaves : kWideTileWaves;
    return !Knobs().old && !Knobs().s2 && !Knobs().r1 && CountTiles<C::kWideTile>(&a) >= waves * NumSMs();
  }
  return false;
}

// A padded tile's shape and sides (TiledScalarPadded's template arguments past the element type).
template <int kTileElems, int kRowsPerThread, int kPadElems, int kInSide = transpose::kElemSide,
          int kOutSide = transpose::kElemSide>
struct PaddedShape {
  static constexpr int kTile = kTileElems, kRows = kRowsPerThread, kPad = kPadElems, kIn = kInSide, kOut = kOutSide;
  static constexpr int kThreads = transpose::PaddedTile<kTile, kRows>::kThreads;
};

template <int kE, typename P>
cudaError_t LaunchPaddedGeneral(cudaStream_t stream, TiledArgs a) {
  using T = Storage<kE>;
  const int blocks = static_cast<int>(std::min(CountTiles<P::kTile>(&a), kMaxBlocks));
  transpose::TiledScalarPadded<T, P::kTile, P::kRows, P::kPad, P::kIn, P::kOut><<<blocks, P::kThreads, 0, stream>>>(a);
  return LastLaunchError();
}

// The sides of the padded tiles (PaddedTileBody's kIn / kOut) for ragged 1- and 2-byte shapes. A side whose rows are
// 16-byte aligned moves in 16-byte vectors; "padvec0" (lab) keeps element accesses on both sides. H200, session 37 call
// 7 (CUPTI, best of 3), us against padvec0: x's rows aligned, bfloat16 (50257, 768) 66.3 against 91.4 (jnp 71.8), int8
// (8193, 8192) 92.4 against 153.6; y's rows aligned, bfloat16 (768, 50257) 80.9 against 91.7, int8 (8192, 8193) 109.7
// against 153.7.
// 1-byte elements: x's rows that are not 16-byte aligned load as covering 4-byte words, shifted in registers, where x
// is 4-byte aligned; "padword0" (lab) keeps element loads there. H200, session 37 call 9 (us against padword0): int8
// 8193x8191 138.2 against 153.1 (jnp 75.4), (8192, 8193) 93.5 against 109.4, (3, 4097, 4099) (0, 2, 1) 108.2 against
// 121.2, 4097x1023 5.52 against 5.76 (jnp 5.46). 2-byte elements lost with them (4 bytes a load against 2): bfloat16
// 8193x8191 198.8 against 157.6, (768, 50257) 92.7 against 80.7, 4097x1023 7.74 against 6.48. Word stores of odd y rows
// lost (session 38 call 1; transpose_kernels.cuh's PaddedSide) and were removed: odd y rows take element stores.
struct PaddedSides {
  int in, out;
};
template <int kE, typename Args>
PaddedSides PaddedSidesFor(const Args& a) {
  using transpose::kElemSide, transpose::kVecSide, transpose::kWordSide;
  PaddedSides s{kElemSide, kElemSide};
  if (kE > 2 || Knobs().padvec0) return s;
  auto aligned = [](const void* p, int n) { return reinterpret_cast<uintptr_t>(p) % n == 0; };
  if ((a.na * kE) % 16 == 0 && aligned(a.x, 16)) {
    s.in = kVecSide;
  } else if (kE == 1 && !Knobs().padword0 && aligned(a.x, 4)) {
    s.in = kWordSide;
  }
  if ((a.nb * kE) % 16 == 0 && aligned(a.y, 16)) s.out = kVecSide;
  return s;
}

// Calls launch(in, out) with the sides as std::integral_constant values: word loads for 1-byte elements only, and never
// vectors on both sides (a shape with both takes the swizzled tiles).
template <int kV>
using Side = std::integral_constant<int, kV>;
template <int kE, typename F>
cudaError_t WithPaddedSides(PaddedSides s, F&& launch) {
  using transpose::kElemSide, transpose::kVecSide, transpose::kWordSide;
  auto outs = [&](auto in) -> cudaError_t {
    if constexpr (decltype(in)::value != kVecSide) {
      if (s.out == kVecSide) return launch(in, Side<kVecSide>{});
    }
    return launch(in, Side<kElemSide>{});
  };
  if (s.in == kVecSide) return outs(Side<kVecSide>{});
  if constexpr (kE == 1) {
    if (s.in == kWordSide) return outs(Side<kWordSide>{});
  }
  return outs(Side<kElemSide>{});
}

// The padded tile for kE-byte elements, for both index flavours: calls launch(PaddedShape<...>{}) with TiledConfig's
// tile and PaddedSidesFor's sides, or the lab tokens' shapes ("pad32": the 32x33 tiles before session 37; "pad1":
// 64x65, session 37 call 2).
template <int kE, typename Args, typename F>
cudaError_t WithPaddedTile(const Args& a, F&& launch) {
  using C = TiledConfig<kE>;
  constexpr int kPad = transpose::kPadElems<Storage<kE>>;
  if constexpr (kE <= 2) {
    if (Knobs().pad32) return launch(PaddedShape<32, 8, 1>{});
    if (Knobs().pad1) return launch(PaddedShape<64, 16, 1>{});
    return WithPaddedSides<kE>(PaddedSidesFor<kE>(a), [&](auto in, auto out) {
      return launch(PaddedShape<C::kPadTile, C::kPadRows, kPad, decltype(in)::value, decltype(out)::value>{});
    });
  } else {
    return launch(PaddedShape<C::kPadTile, C::kPadRows, kPad>{});
  }
}

// kAccess: bytes per global access of the swizzled tiles (LaunchTiled); 0: element accesses on padded tiles.
template <int kE, int kAccess>
cudaError_t LaunchTiledGeneral(cudaStream_t stream, TiledArgs a) {
  using C = TiledConfig<kE>;
  if constexpr (kAccess > 0) {
    TiledArgs probe = a;
    if (CountTiles<C::kBigTile>(&probe) >= kSmallWaves * NumSMs()) {
      if constexpr (kAccess == 16) {
        if (Knobs().old || Knobs().s2) return LaunchVec16<kE, C::kBigTile, C::kBigThreads>(stream, a);
      }
      a.b_fastest = BigTilesBFastest();
      if constexpr (C::kWideTile > 0) {
        if (TakesWideTile<kE>(a)) {
          if constexpr (kAccess == 16) {
            if (Knobs().wide == 1024) return LaunchVec16<kE, C::kWideTile, 1024>(stream, a);
            if (Knobs().wideasync && RunsSm90Code()) {
              return LaunchVec16Async<kE, C::kWideTile, C::kWideThreads>(stream, a);
            }
          }
          return LaunchVec16<kE, C::kWideTile, C::kWideThreads, kAccess>(stream, a);
        }
      }
      return LaunchVec16<kE, C::kBigTile, C::kGeneralThreads, kAccess>(stream, a);
    }
    if constexpr (kE == 2 && kAccess == 16) {  // sessions 1-2: 128 threads
      if (Knobs().old || Knobs().s2) return LaunchVec16<kE, C::kSmallTile, 128>(stream, a);
    }
    return LaunchVec16<kE, C::kSmallTile, C::kSmallThreads, kAccess>(stream, a);
  } else {
    return WithPaddedTile<kE>(a, [&](auto shape) { return LaunchPaddedGeneral<kE, decltype(shape)>(stream, a); });
  }
}

// ---- compact flavour (32-bit, one tile per block) ----
// Groups of at most 2 axes and at most one batch axis (most real permutations; every case of issue 5),
// and every byte offset < 2^31 (the flavour's correctness condition, whatever kCompactMaxBytes says).
// Returns false (general flavour) otherwise.
bool MakeCompact(const TiledArgs& a, int elem_bytes, TiledArgs32* c, uint32_t* batch, bool* split,
                 bool any_size = false) {
  const int64_t bytes = a.elements * elem_bytes;
  if (bytes > int64_t{0x7fffffff}) return false;
  if (bytes > kCompactMaxBytes && !Knobs().compact && !any_size) return false;
  if (a.a.n > 2 || a.b.n > 2 || a.batch.n > 1) return false;
  auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  *c = TiledArgs32{};
  c->x = a.x, c->y = a.y, c->na = u(a.na), c->nb = u(a.nb), c->elements = u(a.elements);
  c->a_out = u(a.a.out[0]), c->a_dim = u(a.a.dim[0]), c->a_out_hi = a.a.n == 2 ? u(a.a.out[1]) : 0;
  c->b_in = u(a.b.in[0]), c->b_dim = u(a.b.dim[0]), c->b_in_hi = a.b.n == 2 ? u(a.b.in[1]) : 0;
  c->batch_in = a.batch.n ? u(a.batch.in[0]) : 0, c->batch_out = a.batch.n ? u(a.batch.out[0]) : 0;
  *batch = a.batch.n ? u(a.batch.dim[0]) : 1;
  *split = a.a.n == 2 || a.b.n == 2;
  return true;
}

template <int kTile>
int CompactBlocks(TiledArgs32* c, uint32_t batch) {  // < 2^31: at most one block per element
  c->tiles_a = static_cast<uint32_t>(CeilDiv(c->na, kTile));
  c->tiles_b = static_cast<uint32_t>(CeilDiv(c->nb, kTile));
  return static_cast<int>(int64_t{c->tiles_a} * c->tiles_b * batch);
}

// The compact kernels on a grid of tiles (CompactTile's kTileGrid form: x the fast tile index, y the slow one, z the
// batch) where there is no batch axis and the grid fits (y <= 65535), else on a 1-D grid (CompactTile: two 32-bit
// divisions, ~40 dependent instructions, before a block's first load). H200, session 38 calls 1-2 (CUPTI, best of 5
// rotated rounds small, 3 large, us, 1-D -> tile grid): float32 2048x512 2.34 -> 2.21-2.24 (jnp 2.08-2.14), int8 1.66
// -> 1.54-1.55 (jnp 1.50), bfloat16 1.73-1.76 -> 1.71-1.73, float32 4097x1023 (padded tiles) 8.98 -> 8.85, int8
// 4097x1023 5.49 -> 5.34, float32 4096x1024 7.07-7.18 -> 6.35-6.42 and 2048x2048 7.04 -> 6.24 (one wave of big tiles),
// int8 4096^2 6.75 -> 6.50; no change on multi-wave DRAM-bound ones (int8 8192^2 35.0-35.3 both, 16384x4096 35.3 /
// 35.2, 8200^2 57.9 / 57.3). With a batch axis the z-grid was mixed: (8, 16, 32, 64, 2) (4, 0, 3, 1, 2) float32 1.98 ->
// 1.89, (3, 4104, 4104) (0, 2, 1) int8 42.0 -> 41.4, but bfloat16 (16, 512, 512) (0, 2, 1) 3.49 -> 3.62 and int8 (3,
// 8200, 8200) (0, 2, 1) 136.0-137.0 -> 136.8-139.9, so batched problems keep the 1-D grid. Lab tokens: "grid3" the tile
// grid with a batch axis too, "grid1" the 1-D grid everywhere. Streaming hints on the big tiles lost there (call 1,
// int8 8192^2: stores st.global.cs 35.9 us, loads ld.global.cs 37.2, both 38.0, against 35.0) and were not kept.
bool TileGridFor(const TiledArgs32& c, uint32_t batch, bool b_fastest, dim3* grid) {
  const uint32_t fast = b_fastest ? c.tiles_b : c.tiles_a, slow = b_fastest ? c.tiles_a : c.tiles_b;
  if (Knobs().grid1 || (batch > 1 && !Knobs().grid3) || slow > 65535 || batch > 65535) return false;
  *grid = dim3(fast, slow, batch);
  return true;
}

// A compact kernel in its two grid forms: `on_tiles` on the grid of tiles where TileGridFor allows it, else `flat` on
// `blocks` blocks of a 1-D grid.
using CompactKernel = void (*)(TiledArgs32);
cudaError_t LaunchCompactKernel(cudaStream_t stream, CompactKernel flat, CompactKernel on_tiles, const TiledArgs32& c,
                                uint32_t batch, bool b_fastest, int blocks, int threads) {
  dim3 grid;
  if (TileGridFor(c, batch, b_fastest, &grid)) {
    on_tiles<<<grid, threads, 0, stream>>>(c);
  } else {
    flat<<<blocks, threads, 0, stream>>>(c);
  }
  return LastLaunchError();
}

template <int kE, int kTile, int kThreads, bool kBFastest = false, int kAccess = 16>
cudaError_t LaunchVec16Compact(cudaStream_t stream, TiledArgs32 c, uint32_t batch, bool split) {
  using transpose::TiledVec16SwizzledCompact;
  const int blocks = CompactBlocks<kTile>(&c, batch);
  auto flat = split ? &TiledVec16SwizzledCompact<kE, kTile, kThreads, true, kBFastest, kAccess>
                    : &TiledVec16SwizzledCompact<kE, kTile, kThreads, false, kBFastest, kAccess>;
  auto on_tiles = split ? &TiledVec16SwizzledCompact<kE, kTile, kThreads, true, kBFastest, kAccess, true>
                        : &TiledVec16SwizzledCompact<kE, kTile, kThreads, false, kBFastest, kAccess, true>;
  return LaunchCompactKernel(stream, flat, on_tiles, c, batch, kBFastest, blocks, kThreads);
}

template <int kE, typename P>
cudaError_t LaunchPaddedCompact(cudaStream_t stream, TiledArgs32 c, uint32_t batch, bool split) {
  using T = Storage<kE>;
  using transpose::TiledScalarPaddedCompact;
  const int blocks = CompactBlocks<P::kTile>(&c, batch);
  auto flat = split ? &TiledScalarPaddedCompact<T, P::kTile, P::kRows, true, P::kPad, P::kIn, P::kOut>
                    : &TiledScalarPaddedCompact<T, P::kTile, P::kRows, false, P::kPad, P::kIn, P::kOut>;
  auto on_tiles = split ? &TiledScalarPaddedCompact<T, P::kTile, P::kRows, true, P::kPad, P::kIn, P::kOut, true>
                        : &TiledScalarPaddedCompact<T, P::kTile, P::kRows, false, P::kPad, P::kIn, P::kOut, true>;
  return LaunchCompactKernel(stream, flat, on_tiles, c, batch, false, blocks, P::kThreads);
}

// kTiledPaddedLean (transpose_kernels.cuh has the measurements) where it applies: 4-byte elements, no batch axis, no
// split group, both sides multiples of 32, a grid of tiles that fits. Returns false otherwise.
template <int kE>  // 4-byte elements (the only caller's)
bool LaunchPaddedLean(cudaStream_t stream, const TiledArgs32& c, uint32_t batch, bool split, cudaError_t* err) {
  if (Knobs().nolean || batch != 1 || split || c.na % 32 != 0 || c.nb % 32 != 0 || c.na / 32 > 65535) {
    return false;
  }
  auto kernel = &transpose::TiledPaddedLean<Storage<kE>>;
  const dim3 grid(c.nb / 32, c.na / 32);  // x: tiles down x's rows (B), y: across them (A)
  kernel<<<grid, 128, 0, stream>>>(c);
  *err = LastLaunchError();
  return true;
}

template <int kE>
cudaError_t LaunchRegisterBlocks(cudaStream_t stream, TiledArgs32 c, uint32_t batch, bool split) {
  constexpr int kThreads = kRegisterBlockThreads, kLanes = kRegisterBlockLanes;
  using S = transpose::RegTile<kE, kLanes, kThreads>;
  using transpose::TiledRegisterBlocks;
  c.tiles_a = static_cast<uint32_t>(CeilDiv(c.na, S::kTileA));
  c.tiles_b = static_cast<uint32_t>(CeilDiv(c.nb, S::kTileB));
  const int blocks = static_cast<int>(int64_t{c.tiles_a} * c.tiles_b * batch);
  auto flat = split ? &TiledRegisterBlocks<kE, kLanes, kThreads, true> : &TiledRegisterBlocks<kE, kLanes, kThreads, false>;
  auto on_tiles = split ? &TiledRegisterBlocks<kE, kLanes, kThreads, true, true>
                        : &TiledRegisterBlocks<kE, kLanes, kThreads, false, true>;
  return LaunchCompactKernel(stream, flat, on_tiles, c, batch, false, blocks, kThreads);
}

// ---- kTiledSmallCta (transpose_small_kernels.cuh), lab only ----
// {tile side in elements, threads, access bytes} per element size. Session 4 timed six geometries for
// 4- and 1-byte elements and four for 2-byte ones on an H200 (bench/lab/transpose_s4_h200.md), from XLA's
// one-warp 16x16 float32 tiles to 64x64 tiles of 128 threads; these are the fastest of each, and every
// one lost to the default small tier (2048x512 float32 2.53 against 2.34 us, bfloat16 1.92 against 1.76,
// int8 1.79 against 1.66; the one-warp 16x16 float32 tile took 4.0 us): fewer, larger blocks win here.
// 8-byte elements were not timed.
struct SmallCtaShape {
  int tile, threads, vb;
};
template <int kE>
constexpr SmallCtaShape kSmallCtaShape = kE == 1   ? SmallCtaShape{64, 128, 8}
                                         : kE == 2 ? SmallCtaShape{64, 128, 16}
                                                   : SmallCtaShape{32, 64, 16};

// Runs kTiledSmallCta if its accesses fit the problem (both groups a multiple of the access, both buffers
// aligned to it); returns false otherwise (the caller takes another tier).
template <int kE>
bool TrySmallCta(cudaStream_t stream, TiledArgs32 c, uint32_t batch, bool split, cudaError_t* err) {
  constexpr int kTile = kSmallCtaShape<kE>.tile, kThreads = kSmallCtaShape<kE>.threads;
  constexpr int kVB = kSmallCtaShape<kE>.vb, kV = kVB / kE;
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % kVB == 0; };
  if (c.na % kV != 0 || c.nb % kV != 0 || !aligned(c.x) || !aligned(c.y)) return false;
  const int blocks = CompactBlocks<kTile>(&c, batch);
  if (split) {
    transpose::TiledSmallCta<kE, kTile, kThreads, kVB, true><<<blocks, kThreads, 0, stream>>>(c);
  } else {
    transpose::TiledSmallCta<kE, kTile, kThreads, kVB, false><<<blocks, kThreads, 0, stream>>>(c);
  }
  *err = LastLaunchError();
  return true;
}

// kTiledNarrow (transpose_small_kernels.cuh): a side of at most kNarrowMax elements, the other at least kNarrowTile.
// H200 (session 19, bench/lab/s19_h200.md; standalone lab, warm, us, every output bit-identical to the square
// tiles'), square tiles -> element accesses -> 16-byte accesses: NHWC -> NCHW (64, 224, 224, 3) float32 360 -> 38
// -> 29 (jnp 23 in its own run), NCHW -> NHWC (64, 3, 224, 224) bfloat16 115 -> 36 -> 24 (jnp 13), (64, 50176, 16)
// float32 (0, 2, 1) 214 -> 119 -> 112, (64, 16, 50176) bfloat16 212 -> 104 -> 74. "narrowscalar" (lab) keeps
// element accesses.
template <int kE>
cudaError_t LaunchNarrow(cudaStream_t stream, TiledArgs32 c, uint32_t batch, bool split) {
  using T = Storage<kE>;
  const bool narrow_a = c.na <= c.nb;
  c.tiles_a = narrow_a ? 1 : static_cast<uint32_t>(CeilDiv(c.na, transpose::kNarrowTile));
  c.tiles_b = narrow_a ? static_cast<uint32_t>(CeilDiv(c.nb, transpose::kNarrowTile)) : 1;
  const int blocks = static_cast<int>(int64_t{c.tiles_a} * c.tiles_b * batch);
  constexpr int kThreads = transpose::kNarrowThreads;
  // 16-byte accesses: no split group, the flattened side dense (x rows of na elements back to back, or y rows of
  // nb), every row start of the other side and of each batch matrix 16-byte aligned, both buffers too.
  auto a16 = [](uint64_t elems) { return elems * kE % 16 == 0; };
  const bool vec = !split && !Knobs().narrowscalar && Aligned16(c.x) && Aligned16(c.y) && a16(c.batch_in) &&
                   a16(c.batch_out) && (narrow_a ? c.b_in == c.na && a16(c.a_out) : c.a_out == c.nb && a16(c.b_in));
  auto kernel = narrow_a ? (vec ? transpose::TiledNarrow<T, true, false, true>
                                 : split ? transpose::TiledNarrow<T, true, true> : transpose::TiledNarrow<T, true, false>)
                         : (vec ? transpose::TiledNarrow<T, false, false, true>
                                : split ? transpose::TiledNarrow<T, false, true> : transpose::TiledNarrow<T, false, false>);
  kernel<<<blocks, kThreads, 0, stream>>>(c);
  return LastLaunchError();
}

// The compact flavour's swizzled tiles (LaunchTiledAt).
template <int kE, int kAccess>
cudaError_t LaunchVecCompact(cudaStream_t stream, TiledArgs32 c, uint32_t batch, bool split) {
  using C = TiledConfig<kE>;
  if constexpr (kAccess == 16) {
    cudaError_t err;
    if (Knobs().smallcta && TrySmallCta<kE>(stream, c, batch, split, &err)) return err;
  }
  // Same tile table as the general flavour. Measured alternatives for the small cases, all slower:
  // always the big tile, the scalar 32x32 tile for small problems, 32x32 / 8 rows for odd shapes,
  // 64 threads per small tile, a pipelined persistent big-tile kernel (bench/lab/transpose_results_h200.md).
  TiledArgs32 probe = c;
  if (CompactBlocks<C::kBigTile>(&probe, batch) >= kSmallWaves * NumSMs()) {
    if constexpr (kE == 1 && kAccess == 16) {  // lab ("big128t", lost 3-9%): 10 CTAs of 128 threads an SM, not 8 of 256
      if (Knobs().big128t && BigTilesBFastest()) {
        return LaunchVec16Compact<kE, C::kBigTile, 128, true>(stream, c, batch, split);
      }
    }
    if constexpr (kAccess == 16) {
      if (!BigTilesBFastest()) return LaunchVec16Compact<kE, C::kBigTile, C::kBigThreads>(stream, c, batch, split);
    }
    return LaunchVec16Compact<kE, C::kBigTile, C::kBigThreads, true, kAccess>(stream, c, batch, split);
  }
  if constexpr (kAccess == 16) {
    if (Knobs().s2) {  // session 2: no register blocks, 128 threads for 2-byte elements
      constexpr int kS2Threads = kE == 2 ? 128 : C::kSmallThreads;
      return LaunchVec16Compact<kE, C::kSmallTile, kS2Threads>(stream, c, batch, split);
    }
    if constexpr (kE == 4) {
      cudaError_t err;
      if (LaunchPaddedLean<kE>(stream, c, batch, split, &err)) return err;
    }
    if (C::kSmallRegisterBlocks) return LaunchRegisterBlocks<kE>(stream, c, batch, split);
  }
  return LaunchVec16Compact<kE, C::kSmallTile, C::kSmallThreads, false, kAccess>(stream, c, batch, split);
}

// The tiled tiers at global accesses of kAccess bytes (16, 8, 4 or one element: LaunchTiled), or 0: element accesses
// on the padded tiles.
template <int kE, int kAccess>
cudaError_t LaunchTiledAt(cudaStream_t stream, TiledArgs a) {
  using C = TiledConfig<kE>;
  constexpr bool vec = kAccess > 0;
  TiledArgs32 c;
  uint32_t batch;
  bool split;
  if constexpr (kAccess == 16) {
    if (Knobs().reg && MakeCompact(a, kE, &c, &batch, &split, /*any_size=*/true)) {
      return LaunchRegisterBlocks<kE>(stream, c, batch, split);
    }
  }
  // 1-byte elements on 16-byte accesses keep the compact flavour past kCompactMaxBytes whenever the
  // general flavour would not take its 256x256 tile: the same 128x128 tile and 256 threads, compact
  // indexing. H200, int8 8192x8192, same process: 36.86 -> 36.51 us (session 4) and 36.72 -> 36.42
  // (session 2); int8 16384x16384 on the 128x128 tile 145.55 -> 144.99 (session 2). Small (about 1%) but
  // the same sign in three measurements; the 2-byte tiles lost 6-8% in the compact flavour (occupancy).
  const bool compact_large = kE == 1 && vec && !Knobs().old && !Knobs().s2 && !Knobs().r1 && !Knobs().s3 &&
                             !TakesWideTile<kE>(a);
  // A short side takes kTiledNarrow from 2^18 elements up to any size its 32-bit offsets allow (below, the square
  // tiles' fewer, fuller CTAs won: 4096 x 16 int8 6.9 against 8.3 us).
  const bool narrow = !Knobs().nonarrow && !Knobs().old && std::min(a.na, a.nb) <= transpose::kNarrowMax &&
                      std::max(a.na, a.nb) >= transpose::kNarrowTile && a.elements >= (int64_t{1} << 18);
  if (Knobs().old || !MakeCompact(a, kE, &c, &batch, &split, compact_large || narrow)) {
    return LaunchTiledGeneral<kE, kAccess>(stream, a);
  }
  if (narrow) return LaunchNarrow<kE>(stream, c, batch, split);
  if constexpr (kAccess == 0) {
    return WithPaddedTile<kE>(c, [&](auto shape) {
      return LaunchPaddedCompact<kE, decltype(shape)>(stream, c, batch, split);
    });
  } else {
    return LaunchVecCompact<kE, kAccess>(stream, c, batch, split);
  }
}

// The widest global access (16, 8, 4, 2 or 1 bytes, at least one element) at which every access of a tile row is
// aligned: both groups' bytes and both buffers a multiple of it (a slice at an odd offset inside a jit is not).
template <int kE>
int AccessBytes(const TiledArgs& a) {
  auto fits = [&](int w) {
    return (a.na * kE) % w == 0 && (a.nb * kE) % w == 0 && reinterpret_cast<uintptr_t>(a.x) % w == 0 &&
           reinterpret_cast<uintptr_t>(a.y) % w == 0;
  };
  int w = 16;
  while (w > kE && !fits(w)) w /= 2;
  return w;
}

// Ragged shapes (sides not multiples of 16 bytes), session 37: 1- and 2-byte elements whose sides and buffers are
// multiples of 8 or 4 bytes keep the swizzled tiles with accesses of that width (NarrowAccessTile); the rest take the
// padded element-access tiles. Before, every ragged shape took the padded tiles, 1- and 2-byte ones at 32x33: int8
// (3, 8200, 8200) (0, 2, 1) at 16% of copy, 0.29x jnp (session 36 call 12; "scalarodd" keeps that dispatch). 4- and
// 8-byte elements keep the padded tiles: 4097x1023 float32 at 1.26x jnp; float32 on the swizzled tiles at 8-byte
// accesses (before NarrowAccessTile's contiguous pieces) won 8194^2 (167 against 178 us) but lost 4098x1022 (12.6
// against 8.6 us; session 37 call 1). Element accesses on the swizzled tiles lost 2-5x.
template <int kE>
cudaError_t LaunchTiled(cudaStream_t stream, TiledArgs a) {
  const int access = AccessBytes<kE>(a);
  if (access == 16) return LaunchTiledAt<kE, 16>(stream, a);
  if constexpr (kE <= 2) {
    const TierKnobs& k = Knobs();
    if (!k.scalarodd && !k.old && !k.s2 && !k.r1 && !k.s3) {  // those replay dispatches before session 37
      if (access == 8) return LaunchTiledAt<kE, 8>(stream, a);
      if (access == 4) return LaunchTiledAt<kE, 4>(stream, a);
    }
  }
  return LaunchTiledAt<kE, 0>(stream, a);
}

// The divisors of RowCopy's kFastDiv form; false where one exceeds 2^31 (FastDivU32's range).
bool SetFastDivisors(RowArgs* a) {
  constexpr int64_t kMax = int64_t{1} << 31;
  if (a->row_vecs > kMax) return false;
  for (int k = 0; k < a->rows.n; ++k) {
    if (a->rows.dim[k] > kMax) return false;
  }
  a->row_div = transpose::FastDivU32::For(static_cast<uint32_t>(a->row_vecs));
  for (int k = 0; k < a->rows.n; ++k) a->dim_div[k] = transpose::FastDivU32::For(static_cast<uint32_t>(a->rows.dim[k]));
  return true;
}

// kFastDivShape: the shape has a kFastDiv form (instantiated only where it can run); fast_div: take it.
template <typename V, bool kInputOrder, int kThreads, int kUnroll, bool kFastDivShape>
cudaError_t LaunchRowCopyShape(cudaStream_t stream, RowArgs a, bool fast_div) {
  const int64_t blocks = std::min<int64_t>(CeilDiv(a.total_vecs, kThreads * kUnroll), kMaxBlocks);
  // 32-bit index math whenever the index space and its grid-stride overshoot fit.
  if (a.total_vecs + blocks * kThreads * kUnroll < (int64_t{1} << 32)) {
    if (kFastDivShape && fast_div && SetFastDivisors(&a)) {
      transpose::RowCopy<V, uint32_t, kInputOrder, kThreads, kUnroll, kFastDivShape>
          <<<static_cast<int>(blocks), kThreads, 0, stream>>>(a);
    } else {
      transpose::RowCopy<V, uint32_t, kInputOrder, kThreads, kUnroll, false>
          <<<static_cast<int>(blocks), kThreads, 0, stream>>>(a);
    }
  } else {
    transpose::RowCopy<V, int64_t, kInputOrder, kThreads, kUnroll, false>
        <<<static_cast<int>(blocks), kThreads, 0, stream>>>(a);
  }
  return LastLaunchError();
}

// kRowCopyLean where it fits (32-bit indices, at most 4 row axes, every divisor <= 2^31: SetFastDivisors);
// cudaErrorNotSupported otherwise. `a` by value: SetFastDivisors fills its divisors.
constexpr int kRowLeanThreads = 128;
template <bool kInputOrder = false>
cudaError_t LaunchRowCopyLean(cudaStream_t stream, RowArgs a) {
  if (a.rows.n > transpose::kRowLeanMaxAxes || a.total_vecs + kRowLeanThreads >= (int64_t{1} << 32) ||
      !SetFastDivisors(&a)) {
    return cudaErrorNotSupported;
  }
  transpose::RowLeanArgs p{};
  p.x = a.x, p.y = a.y, p.bytes = a.bytes;
  p.total = static_cast<uint32_t>(a.total_vecs), p.row_vecs = static_cast<uint32_t>(a.row_vecs);
  p.row_div = a.row_div;
  p.n = a.rows.n;
  for (int k = 0; k < a.rows.n; ++k) {
    p.dim[k] = static_cast<uint32_t>(a.rows.dim[k]);
    p.div[k] = a.dim_div[k];
    p.stride[k] = kInputOrder ? a.rows.out[k] : a.rows.in[k];
  }
  const unsigned blocks = static_cast<unsigned>(CeilDiv(a.total_vecs, kRowLeanThreads));
  transpose::RowCopyLean<kRowLeanThreads, kInputOrder><<<blocks, kRowLeanThreads, 0, stream>>>(p);
  return LastLaunchError();
}

// 16-byte accesses: kRowCopyLean where it fits, in either order (LaunchRowCopyLean; session 36's gains in input order
// are at kRowCopyInputOrderMaxRun). Output order, session 35 (call 15): plain copies 88.8% -> 92.1% /
// 94.3% -> 96.7% of copy against the form below), else RowCopy with one access a thread in CTAs of 128 threads (XLA's
// elementwise shape), its index divided by precomputed multipliers. Neither alone helps: session 34 measured one access
// a thread with division instructions at 75-78% of the copy ceiling, and the multipliers at 256 x 2 within 1%.
// Together, H200, session 35 (bench/lab/s35_h200.md call 5: the benchmark's CUPTI timer, one process with jnp, best of
// 3 rotated rounds, % of the 1 GiB copy ceiling), plain copy (2, 2, n) float32 (1, 0, 2), 256 x 2 with divisions
// ("rc256x2") -> this RowCopy form:
//   67 MB moved   86.6% -> 88.9% (17.68 us; XLA's x * c over the same bytes 92.7%, 128 x 1 with divisions 83.6%)
//   134 MB moved  93.0% -> 94.4% (33.20 us; x * c 97.0%, 128 x 1 with divisions 89.0%)
// Where the lean form does not fit, input order keeps session 34's 256 threads x 2 accesses with division instructions:
// the same 128 x 1 form lost there in call 5 ("rcin128"): 64-byte runs (64, 512, 32, 16) float32 (0, 2, 1, 3) 94.8% ->
// 93.1%, 256-byte runs (16, 256, 32, 128) bfloat16 89.8% -> 88.2%, 128-byte runs (the attention permute, behind its
// default tiled row copy) 89.3% -> 87.0%. Element accesses: 256 threads x 4 accesses (kRowCopyUnroll), division
// instructions (not re-measured).
template <typename V, bool kInputOrder = false>
cudaError_t LaunchRowCopy(cudaStream_t stream, const RowArgs& a) {
  if constexpr (std::is_same_v<V, uint4>) {
    // The lean form where it fits (lab: "rclean0" keeps RowCopy's forms below, as do the tokens that pick one).
    if (!Knobs().rc256x2 && !Knobs().rcslow && !Knobs().rclean0 && !(kInputOrder && Knobs().rcin128)) {
      if (const cudaError_t e = LaunchRowCopyLean<kInputOrder>(stream, a); e != cudaErrorNotSupported) return e;
    }
    if (kInputOrder ? Knobs().rcin128 : !Knobs().rc256x2) {
      return LaunchRowCopyShape<V, kInputOrder, 128, 1, true>(stream, a, !Knobs().rcslow);
    }
    return LaunchRowCopyShape<V, kInputOrder, 256, 2, false>(stream, a, false);
  } else {
    return LaunchRowCopyShape<V, kInputOrder, 256, transpose::kRowCopyUnroll, false>(stream, a, false);
  }
}

// kRowCopyBulk (lab): a persistent grid, 6 blocks of 33 KB shared memory per SM.
cudaError_t LaunchRowCopyBulk(cudaStream_t stream, RowArgs a) {
  constexpr int kThreads = transpose::kBulkThreads;
  const int64_t runs = a.total_vecs / a.row_vecs;
  const int64_t chunks = CeilDiv(runs, transpose::kBulkChunkBytes / (a.row_vecs * 16));
  const int blocks = static_cast<int>(std::min<int64_t>(chunks, int64_t{6} * NumSMs()));
  if (runs < (int64_t{1} << 32)) {
    transpose::RowCopyBulk<uint32_t><<<blocks, kThreads, 0, stream>>>(a);
  } else {
    transpose::RowCopyBulk<int64_t><<<blocks, kThreads, 0, stream>>>(a);
  }
  return LastLaunchError();
}

// A row copy's two row axes (plan.rows indices): a, the output's innermost (its output stride is the run), and b, the
// input's innermost (its input stride is the run). False where either is missing or they coincide (the planner
// merges such axes, so in practice never).
bool RowAxes(const TransposePlan& plan, int* a, int* b) {
  const auto& L = plan.rows;
  const int64_t run = plan.row;  // strides in elements
  *a = *b = -1;
  for (int k = 0; k < L.n; ++k) {
    if (L.out[k] == run) *a = k;
    if (L.in[k] == run) *b = k;
  }
  return *a >= 0 && *b >= 0 && *a != *b;
}

// kRowCopyTensor (lab tokens "rowtma" / "rowtma16", transpose_bulk_kernels.cuh): boxes of about `box_bytes` of two
// 5-d tensor maps over the same axes, runs of 16-256 bytes; cudaErrorNotSupported where the plan has no such pair
// of row axes (or more than four of them), or the driver refuses the maps.
cudaError_t LaunchRowCopyTensor(cudaStream_t stream, const TransposePlan& plan, const void* x, void* y,
                                int64_t box_bytes) {
  const int64_t eb = plan.elem_bytes, run = plan.row * eb;
  const auto& L = plan.rows;  // output order, innermost first, strides in elements
  if (L.n < 2 || L.n > 4 || run % 16 != 0 || run > 256 || !RunsSm90Code()) return cudaErrorNotSupported;
  int a, b;
  const EncodeTiledFn encode = EncodeTiled();
  if (!RowAxes(plan, &a, &b) || encode == nullptr) return cudaErrorNotSupported;
  int order[4] = {a, b, 0, 0}, m = 2;
  for (int k = 0; k < L.n; ++k)
    if (k != a && k != b) order[m++] = k;
  // Boxes of about box_bytes: box_a x box_b runs, box_a the largest power of two <= sqrt(runs a box), both <= 256.
  const int64_t per_box = std::max<int64_t>(1, box_bytes / run);
  int64_t box_a = 1;
  while (box_a * 2 * box_a * 2 <= per_box && box_a < 256) box_a *= 2;
  box_a = std::min(box_a, L.dim[a]);
  const int64_t box_b = std::min<int64_t>({L.dim[b], 256, std::max<int64_t>(1, per_box / box_a)});
  transpose::TensorRowTiles t{};
  t.box_a = static_cast<int32_t>(box_a), t.box_b = static_cast<int32_t>(box_b);
  t.box_bytes = static_cast<uint32_t>(run * box_a * box_b);
  if (t.box_bytes % 128 != 0) return cudaErrorNotSupported;  // every slot 128-byte aligned
  cuuint64_t dims[5] = {static_cast<cuuint64_t>(run), 1, 1, 1, 1}, in_strides[4], out_strides[4];
  const cuuint64_t total = static_cast<cuuint64_t>(CeilDiv(plan.elements * eb, 16) * 16);
  for (int i = 0; i < 4; ++i) {
    if (i < m) {
      dims[i + 1] = static_cast<cuuint64_t>(L.dim[order[i]]);
      in_strides[i] = static_cast<cuuint64_t>(L.in[order[i]] * eb);
      out_strides[i] = static_cast<cuuint64_t>(L.out[order[i]] * eb);
    } else {
      in_strides[i] = out_strides[i] = total;  // axes of one
    }
  }
  const cuuint32_t box[5] = {static_cast<cuuint32_t>(run), static_cast<cuuint32_t>(box_a),
                             static_cast<cuuint32_t>(box_b), 1, 1};
  const cuuint32_t unit[5] = {1, 1, 1, 1, 1};
  CUtensorMap in_map, out_map;
  auto make = [&](CUtensorMap* map, const void* base, const cuuint64_t* strides) {
    return encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 5, const_cast<void*>(base), dims, strides, box, unit,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
  };
  if (!make(&in_map, x, in_strides) || !make(&out_map, y, out_strides)) return cudaErrorNotSupported;
  t.tiles_a = static_cast<int32_t>(CeilDiv(L.dim[a], box_a));
  t.tiles_b = static_cast<int32_t>(CeilDiv(L.dim[b], box_b));
  t.dim3 = static_cast<int32_t>(dims[3]);
  t.tiles = int64_t{t.tiles_a} * t.tiles_b * static_cast<int64_t>(dims[3] * dims[4]);
  const int smem = static_cast<int>(transpose::kTensorStages * t.box_bytes);
  cudaError_t e = cudaFuncSetAttribute(transpose::RowCopyTensor, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  int fit = 0;
  if (e == cudaSuccess)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, transpose::RowCopyTensor, transpose::kTensorThreads, smem);
  if (e != cudaSuccess) return e;
  const int64_t blocks = std::min<int64_t>(t.tiles, int64_t{std::max(fit, 1)} * NumSMs());
  transpose::RowCopyTensor<<<static_cast<unsigned>(blocks), transpose::kTensorThreads, smem, stream>>>(in_map, out_map,
                                                                                                      t);
  return LastLaunchError();
}

// ---- kRowCopyTiled (transpose_rowtile_kernels.cuh) ----
// Runs of 16-128 bytes (a multiple of 16, both buffers 16-byte aligned: RowCopyTier's 16-byte condition) with two
// distinct row axes (RowAxes). Tiles of about kKB KB (lab tokens rowtile4k / 8k / 16k): n = kKB * 64 / run-vectors
// runs, kTileA (along A, written contiguously) the smallest power of two whose square is >= n, kTileB = n / kTileA:
//   run bytes    16       32       64       128
//   4 KB      16 x 16  16 x 8   8 x 8    8 x 4
//   8 KB      32 x 16  16 x 16  16 x 8   8 x 8
//   16 KB     32 x 32  32 x 16  16 x 16  16 x 8
// so every side is >= 256 bytes (4 KB) / >= 512 bytes (8 and 16 KB) of contiguous x per A and y per B. 256 threads
// (1, 2 or 4 accesses a side), static shared memory: up to 8 CTAs (2048 threads) per SM, 32-128 KB a SM in flight.
constexpr int kRowTileThreads = 256;
constexpr int64_t kRowTileMaxRun = 128;
constexpr int RowTileA(int kb, int run_vecs) {
  const int n = kb * 64 / run_vecs;
  int a = 1;
  while (a * a < n) a *= 2;
  return a;
}
constexpr int RowTileB(int kb, int run_vecs) { return kb * 64 / run_vecs / RowTileA(kb, run_vecs); }

// The default rule: runs of 16, 32 and 128 bytes whose A and B each fill at least one tile, on 8 KB tiles in A-fastest
// order ("norowtile" restores the input-order row copy). H200, session 33 call 4 (bench/lab/s33_rowtile_lab_h200.txt:
// CUPTI, one process with jnp, 3 rotated rounds, best), input-order copy -> 8 KB B-fastest / A-fastest, x jnp:
//   16 B  (512, 512, 4) float32 (1, 0, 2)             0.47x (28% of copy) -> 1.17x / 1.15x (68-69%)
//   32 B  (256, 1024, 8) float32 (1, 0, 2)            0.65x (60%) -> 1.03x / 1.00x (92-95%)
//         (1024, 256, 8) float32                      0.67x (61%) -> 1.01x / 1.03x (92-94%)
//         (2048, 2048, 16) bfloat16 (1, 0, 2)         1.13x (80%) -> 1.29x / 1.33x (92-94%)
//         (4096, 4096, 16) bfloat16                   1.06x (75%) -> 1.28x / 1.29x (90-91%)
//   128 B (32, 128, 64, 64) bfloat16 (0, 2, 1, 3)     1.185x (87.4%) -> 1.196x / 1.197x (88.2-88.3%)
//         (8, 32, 2048, 64) float16 (0, 2, 1, 3)      1.205x (92.4%) -> 1.221x / 1.218x (93.3-93.6%)
// 4 KB tiles lost to the input-order copy at 64-128 B (0.90-0.98x it), 16 KB tied 8 KB or lost 1-3%. At 64 B the
// input-order copy stays: (64, 512, 32, 16) float32 (0, 2, 1, 3) 1.001x (94.6%) against 0.983x / 0.979x here.
// Since session 35 runs of 128 bytes take the lean row copy instead (output order in session 35, input order since
// session 36: kRowCopyInputOrderMaxRun).
constexpr int kRowTileDefaultKB = 8;
constexpr bool RowTileDefaultRun(int64_t run) { return run == 16 || run == 32; }

template <int kV, int kA, int kB>  // run vectors, tile runs along A and along B
cudaError_t LaunchRowTileShape(cudaStream_t stream, transpose::RowTileArgs t) {
  t.tiles_a = CeilDiv(t.na, kA);
  t.tiles_b = CeilDiv(t.nb, kB);
  t.tiles = t.tiles_a * t.tiles_b * t.batch.Size();
  // "rowtilep" (lab): as many CTAs as are resident at once (8 of 256 threads an SM), each looping over tiles.
  const int64_t cap = Knobs().rowtilep ? int64_t{NumSMs()} * 8 : kMaxBlocks;
  const int blocks = static_cast<int>(std::min(t.tiles, cap));
  // 32-bit index math (fast division) whenever every byte offset and the tile loop's overshoot fit.
  if (t.bytes <= int64_t{0xffffffff} && t.tiles + blocks <= int64_t{0xffffffff}) {
    transpose::RowTileCopy<kV, kA, kB, kRowTileThreads, uint32_t><<<blocks, kRowTileThreads, 0, stream>>>(t);
  } else {
    transpose::RowTileCopy<kV, kA, kB, kRowTileThreads, int64_t><<<blocks, kRowTileThreads, 0, stream>>>(t);
  }
  return LastLaunchError();
}

template <int kKB>
cudaError_t LaunchRowTileSized(cudaStream_t stream, const transpose::RowTileArgs& t, int64_t run_vecs) {
  switch (run_vecs) {
    case 1: return LaunchRowTileShape<1, RowTileA(kKB, 1), RowTileB(kKB, 1)>(stream, t);
    case 2: return LaunchRowTileShape<2, RowTileA(kKB, 2), RowTileB(kKB, 2)>(stream, t);
    case 4: return LaunchRowTileShape<4, RowTileA(kKB, 4), RowTileB(kKB, 4)>(stream, t);
    case 8: return LaunchRowTileShape<8, RowTileA(kKB, 8), RowTileB(kKB, 8)>(stream, t);
  }
  return cudaErrorNotSupported;
}

// The tiled row copy's geometry; false where it does not apply (the caller has checked the 16-byte condition).
// Runs of 48, 80, 96 and 112 bytes (not a power-of-two number of vectors) keep the input-order row copy.
bool MakeRowTile(const TransposePlan& plan, const void* x, void* y, transpose::RowTileArgs* t) {
  const int64_t eb = plan.elem_bytes, run = plan.row * eb;
  int a, b;
  if (run % 16 != 0 || run > kRowTileMaxRun || ((run / 16) & (run / 16 - 1)) != 0 || !RowAxes(plan, &a, &b)) {
    return false;
  }
  const auto& L = plan.rows;
  *t = transpose::RowTileArgs{};
  t->x = static_cast<const unsigned char*>(x), t->y = static_cast<unsigned char*>(y);
  t->na = L.dim[a], t->nb = L.dim[b], t->a_in = L.in[a] * eb, t->b_out = L.out[b] * eb;
  t->bytes = plan.elements * eb;
  t->a_fastest = Knobs().rowtilea || Knobs().rowtile == 0;  // the default rule's order: A fastest (above)
  for (int k = 0; k < L.n; ++k) {
    if (k == a || k == b) continue;
    auto& B = t->batch;
    B.dim[B.n] = L.dim[k], B.in[B.n] = L.in[k] * eb, B.out[B.n] = L.out[k] * eb, ++B.n;
  }
  return true;
}

// The tile size (KB) the tiled row copy takes for `t` (runs of `run` bytes), 0 for none: the lab token's, else the
// default rule's.
int RowTileKB(const transpose::RowTileArgs& t, int64_t run) {
  const TierKnobs& k = Knobs();
  if (k.rowtile > 0) return k.rowtile;
  if (kRowTileDefaultKB == 0 || k.norowtile || k.old || k.s2) return 0;
  if (!RowTileDefaultRun(run)) return 0;
  const int v = static_cast<int>(run / 16);
  return t.na >= RowTileA(kRowTileDefaultKB, v) && t.nb >= RowTileB(kRowTileDefaultKB, v) ? kRowTileDefaultKB : 0;
}

cudaError_t LaunchRowTile(cudaStream_t stream, const transpose::RowTileArgs& t, int kb, int64_t run_vecs) {
  switch (kb) {
    case 4: return LaunchRowTileSized<4>(stream, t, run_vecs);
    case 8: return LaunchRowTileSized<8>(stream, t, run_vecs);
    case 16: return LaunchRowTileSized<16>(stream, t, run_vecs);
  }
  return cudaErrorNotSupported;
}

cudaError_t RowCopyTier(cudaStream_t stream, const TransposePlan& plan, const void* x, void* y) {
  RowArgs a{static_cast<const unsigned char*>(x), static_cast<unsigned char*>(y), 0, 0,
            plan.elements * plan.elem_bytes, plan.rows};
  const int64_t row_bytes = plan.row * plan.elem_bytes;
  // 16-byte accesses when every run starts 16-byte aligned (row length and all strides are multiples
  // of the row, so the row length and the base pointers decide).
  if (row_bytes % 16 == 0 && Aligned16(x) && Aligned16(y)) {
    if (Knobs().rowtma > 0) {
      const cudaError_t e = LaunchRowCopyTensor(stream, plan, x, y, Knobs().rowtma);
      if (e != cudaErrorNotSupported) return e;
    }
    transpose::RowTileArgs t;
    if ((Knobs().rowtile > 0 || kRowTileDefaultKB > 0) && MakeRowTile(plan, x, y, &t)) {
      if (const int kb = RowTileKB(t, row_bytes); kb > 0) return LaunchRowTile(stream, t, kb, row_bytes / 16);
    }
    a.row_vecs = row_bytes / 16;
    a.total_vecs = plan.elements * plan.elem_bytes / 16;
    if ((row_bytes <= kRowCopyInputOrderMaxRun || Knobs().rcinlean) && !Knobs().old && !Knobs().s2 && !Knobs().rcout) {
      // Input order: the axes sorted by input stride (innermost first), both strides in bytes.
      auto& L = a.rows;
      for (int i = 1; i < L.n; ++i)
        for (int j = i; j > 0 && L.in[j] < L.in[j - 1]; --j) {
          std::swap(L.dim[j], L.dim[j - 1]), std::swap(L.in[j], L.in[j - 1]), std::swap(L.out[j], L.out[j - 1]);
        }
      for (int k = 0; k < L.n; ++k) L.in[k] *= plan.elem_bytes, L.out[k] *= plan.elem_bytes;
      if (Knobs().rowbulk && row_bytes <= transpose::kBulkChunkBytes && RunsSm90Code()) {
        return LaunchRowCopyBulk(stream, a);
      }
      return LaunchRowCopy<uint4, true>(stream, a);
    }
  }
  for (int k = 0; k < a.rows.n; ++k) a.rows.in[k] *= plan.elem_bytes;  // bytes: any access width
  if (row_bytes % 16 == 0 && Aligned16(x) && Aligned16(y)) return LaunchRowCopy<uint4>(stream, a);
  a.row_vecs = plan.row;
  a.total_vecs = plan.elements;
  switch (plan.elem_bytes) {
    case 1: return LaunchRowCopy<uint8_t>(stream, a);
    case 2: return LaunchRowCopy<uint16_t>(stream, a);
    case 4: return LaunchRowCopy<uint32_t>(stream, a);
    case 8: return LaunchRowCopy<uint64_t>(stream, a);
  }
  return cudaErrorInvalidValue;
}

cudaError_t TiledTier(cudaStream_t stream, const TransposePlan& plan, const void* x, void* y) {
  TiledArgs a{};
  a.x = static_cast<const unsigned char*>(x);
  a.y = static_cast<unsigned char*>(y);
  a.na = plan.a_group.Size();
  a.nb = plan.b_group.Size();
  a.elements = plan.elements;
  a.a = plan.a_group;
  a.b = plan.b_group;
  a.batch = plan.batch;
  switch (plan.elem_bytes) {
    case 1: return LaunchTiled<1>(stream, a);
    case 2: return LaunchTiled<2>(stream, a);
    case 4: return LaunchTiled<4>(stream, a);
    case 8: return LaunchTiled<8>(stream, a);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t LaunchTranspose(cudaStream_t stream, const TransposePlan& plan, const void* x, void* y) {
  switch (plan.kind) {
    case TransposePlan::kEmpty: return cudaSuccess;
    case TransposePlan::kCopy:
      // A copy engine transfer: graph-capturable, no kernel needed.
      return cudaMemcpyAsync(y, x, static_cast<size_t>(plan.elements) * plan.elem_bytes,
                             cudaMemcpyDeviceToDevice, stream);
    case TransposePlan::kRowCopy: return RowCopyTier(stream, plan, x, y);
    case TransposePlan::kTiled: return TiledTier(stream, plan, x, y);
  }
  return cudaErrorInvalidValue;
}

}  // namespace jk
