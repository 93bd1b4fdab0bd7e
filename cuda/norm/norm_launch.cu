// Tier selection and launches for LayerNorm / RMSNorm. The tiers, by row length (in 16-byte packs of
// P = 16 / sizeof(T) elements; a scalar path with P = 1 where x, y, scale or bias is misaligned or n % P
// != 0):
//   kShortRowsOnePack      bf16/f16 n = 32, 64 and 128 (LayerNorm 128: whole CTAs without statistics), float32 n = 16,
//                          32 and 64, with one scale/bias row and at least a CTA's rows: W lanes a row with one 16-byte
//                          pack each, R rows a thread, CTAs of 32 / 64 / 128 rows, every CTA whole
//                          (norm_short_onepack.cuh)
//   kShortRowsPacked       rows of 64 B - 4 KB with one scale/bias row: bf16/f16 n in {32, 48, 64, 80, 96, 128,
//                          160, 192, 224, 256, 320, 384, 448, 512, 768} (and LayerNorm 112, 1024, 1536), float32 n in
//                          {16, 24, 32, 48, 80, 96, 112, 128, 160, 192, 224} (and LayerNorm 64, 256, 384, 512, 768,
//                          1024): W lanes x C packs per row, both compile-time
//                          (PackedDefault), 32-bit offsets, the row converted once, parameters held
//                          packed (norm_short_packed.cuh)
//   kShortRowsPersistent   the other float32 n in [12, 128]: persistent lane groups looping over rows, 2
//                          rows per group per step plus the next step's rows in flight, scale/bias held in
//                          registers, the shift broadcast by a shuffle (norm_short.cuh)
//   kGroupPerRowRegisters  the other float32 n <= 2048 (not LayerNorm 2048) and bf16/f16 n <= 512 (misaligned
//                          rows: n <= 32 x the packs-per-lane cap, kGroupMaxPacksPerLane): a group of 1..32 lanes per
//                          row (2 rows per lane below 32 lanes), the row in registers, warp-shuffle reductions
//                          (norm_group.cuh)
//   kBlockPerRowPacked     bf16/f16 n in (512, 32768]: a CTA per row, the row kept as raw 16-byte packs in
//                          registers (16-64 elements per thread, 40-64 registers), converted to float32 in
//                          each pass (norm_packed_block.cuh); 95-98% of the copy ceiling from 2048 columns
//   kBlockPerRowBulkSmem   rows of 16-32 KB on sm_90+ (float32 LayerNorm n = 8192 with grouped parameters; 16-bit n in
//                          [8192, 16384] only with JK_NORM_TIER=legacy): persistent CTAs that stage their next rows in shared memory with
//                          1-D bulk copies (mbarrier completion), so loads stay in flight during each
//                          row's reductions (norm_block.cuh)
//   kBlockPerRowRegisters  the rest up to n < 16384 (float32 RMSNorm: n <= 16384): a CTA per row, the row
//                          in registers, block reductions; float32 LayerNorm rows of 1025-2047, 2049-4095 and
//                          8193-16383 columns capped at 64 registers (BlockPerRowRegistersTwoPerSm, 8 packs a
//                          thread), so two or more CTAs share an SM; float32 LayerNorm 2048 uncapped, 64 threads x
//                          8 packs (norm_block.cuh)
//   kClusterRowPairs       one parameter row on sm_90+: float32 LayerNorm n in (6144, 8192] (one CTA), float32 n in
//                          (16384, 131072], 16-bit RMSNorm n in (32768, 262144], 16-bit LayerNorm rows that fill every
//                          CTA (65536, 131072, 262144): CTAs of two 512-thread halves, each its own row, the rows in a
//                          cluster's registers, scale and bias in shared memory once for both (norm_cluster_pairs.cuh)
//   kClusterRowsRegisters  the other rows past 16384 float32 / 32768 16-bit columns on sm_90+, up to 8 CTAs: two CTAs
//                          of 512 threads per SM, the row in a cluster's registers; float32 RMSNorm partly in shared
//                          memory (the hybrid kernel; norm_cluster.cuh)
//   kBlockPerRowTwoReads   n >= 16384 (and long misaligned rows): 512 threads per row, a Welford pass,
//                          then a normalising pass that re-reads the row (from L2; norm_two_reads.cuh)
//   kStridedSplit          a non-last axis of n > 4096 rows with the lowering's workspace: chunks of the axis across
//                          CTAs, their statistics in the workspace, a merge, an apply pass (norm_split.cuh)
//   kStridedTileRegisters  a non-last axis (inner > 1) in 16-byte packs of inner columns, the column tile
//                          held in registers (or a cluster's), x read once (norm_strided.cuh; configuration
//                          by n: tile::DefaultConfig)
//   kStridedTwoReads       the other non-last axes (misaligned, inner not a whole number of packs, past
//                          8 x 4096 rows) and the statistics-only entry point (norm_two_reads.cuh)
// BlockPerRowRegisters can also spread a row over a thread-block cluster (DSMEM reductions); every
// measured cluster configuration (2-8 CTAs, 2048-65536 columns) was slower than one CTA per row or the
// two-read kernel, so only the JK_NORM_TIER lab hook launches clusters.
// Only the bulk tier uses dynamic shared memory (up to 64 KB per CTA): it raises its instantiation's limit
// once per device (cudaFuncSetAttribute) and sizes its persistent grid from the occupancy calculator.
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <type_traits>

#include "common/launch.h"
#include "norm/norm_block.cuh"
#include "norm/norm_cluster.h"
#include "norm/norm_window.h"
#include "norm/norm_group.cuh"
#include "norm/norm_kernels.cuh"
#include "norm/norm_launch.h"
#include "norm/norm_long.h"
#include "norm/norm_packed_block.h"
#include "norm/norm_short.h"
#include "norm/norm_stats_apply.cuh"
#include "norm/norm_strided.cuh"
#include "norm/norm_split.cuh"
#include "norm/norm_two_reads.cuh"

namespace jk {
namespace {

using norm::Kind;
using norm::Params;

constexpr int kGroupBlockThreads = 128;
// Packs per lane in the group tier: 16 of float32 (rows up to 2048), 8 of bf16/f16 for RMSNorm (2048;
// measured 3.6-3.9 TB/s) and 4 for LayerNorm (1024): the compiler keeps half rows converted to float32
// plus the scale and bias packs of the output pass, and 8 half packs per lane took 225 registers (2 CTAs
// per SM), so longer half LayerNorm rows went to the block tier. Vectorised bf16/f16 rows of more than 512
// columns now take the packed row tier (PackedBlockDefault) first.
template <typename T, Kind K>
constexpr int kGroupMaxPacksPerLane = sizeof(T) == 4 ? 16 : K == Kind::kRmsNorm ? 8 : 4;
// From this row length on, the two-read kernel wins: measured on H200 at 16384-65536 columns, 2.4-2.9 TB/s
// against 1.4-2.3 for a row held in registers by one CTA or by a cluster of 2-8 CTAs (DSMEM exchange):
// 512 light threads per CTA keep more rows in flight per SM, and the second read of a row comes from L2.
constexpr int64_t kTwoReadsMinColumns = 16384;
// Grids beyond this many blocks loop (grid-stride) instead: keeps gridDim.x far from its 2^31 - 1 limit.
constexpr int64_t kMaxBlocks = int64_t{1} << 20;

// Calls fn(std::integral_constant<int, V>) for the V in Vs equal to v.
template <int... Vs, typename Fn>
cudaError_t WithConstant(int v, Fn&& fn) {
  cudaError_t r = cudaErrorInvalidValue;
  (void)((v == Vs ? (r = fn(std::integral_constant<int, Vs>{}), true) : false) || ...);
  return r;
}

// 64-bit doubling: an int would wrap to 0 and loop for ever past 2^30 (callers pass small values).
int64_t NextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

// Benchmarking hook (bench/lab/norm_sweep.py, bench/lab/norm_half_lab.py), read once per process:
// JK_NORM_TIER="block C B CLUSTER" or "tworeads B" forces a row tier for every launch ("block2 8 B": the
// float32 register tier capped at 64 registers, LaunchBlockPerRowTwoPerSm); "bulk S B M" forces
// the bulk tier wherever the row fits (S stages, B threads, at most M CTAs per SM; 0 = the default);
// "proposed" is the candidate dispatch, not yet measured on a GPU (see bench/lab/norm_half_lab.py): the
// bulk tier for every row of at most 32 KB beyond the lane groups, the scale/bias loads of short rows
// issued with x (kEarlyParams), and the register tier's lean output pass where it still runs;
// "block-lean" is the default dispatch with only that lean output pass (BlockPerRowRegisters<...,
// kLoadedParams = true>); "short R F M [L]" sends every row of 3-128 packs to the persistent short-row
// tier (norm_short.cuh) with R rows per lane group, prefetch F (0/1), at most M CTAs per SM (0 =
// occupancy), L = 1 for its lean variant (32-bit indices; not measured yet); "packed C [R]" sends the
// rows that LaunchShortRowsPacked takes (64 B - 4 KB) to that tier (norm_short_packed.cuh) with C packs
// per lane (2-8; 1 only with R > 1) and R rows a lane group (1, 2, 4, 8: norm_short.cu's LaunchRows); "pblock
// E" sends bf16/f16 rows of 16-byte packs up to 32768 columns to the packed row tier (norm_packed_block.cuh) with
// E = 16, 32 or 64 elements per thread, a CTA per row, where the row fits 512 threads; "pwarp E B" the same with a
// warp per row (E = 16, 32 or 64, rows of at most 32 * E, CTAs of B threads, 0 = 256); "legacy" the dispatch before the
// packed tier; "onepack" sends the rows the one-pack lanes fit (64, 128, 256 bytes) to them.
// Unset in normal use. With JK_NORM_TIER_DYNAMIC=1 (bench/lab/norm_short_lab.py, with XLA's command
// buffers off) the variable is read again at every launch, so one process times every variant.
struct Forced {
  enum { kNone, kBlock, kBlock2, kTwoReads, kBulk, kProposed, kBlockLean, kShort, kPacked, kPackedBlock, kPackedWarp,
         kLegacy, kOnePack } tier =
      kNone;
  int c = 0, b = 0, cluster = 1;
  int lean = 0;
};
Forced ForcedTier() {
  Forced f;
  const char* s = std::getenv("JK_NORM_TIER");
  if (s == nullptr) return f;
  char name[16] = {0};
  int c = 0, b = 0, cl = 1, lean = 0;
  if (std::sscanf(s, "%15s %d %d %d %d", name, &c, &b, &cl, &lean) < 1) return f;
  if (std::string_view(name) == "block" && (c == 2 || c == 4 || c == 8) && b >= 32 &&
      b <= norm::kBlockMaxThreads &&
      b % 32 == 0 && (cl == 1 || cl == 2 || cl == 4 || cl == 8)) {
    f = {Forced::kBlock, c, b, cl};
  } else if (std::string_view(name) == "block2" && c == 8 && b >= 32 && b <= norm::kBlockMaxThreads && b % 32 == 0) {
    f = {Forced::kBlock2, c, b, 1};
  } else if (std::string_view(name) == "tworeads") {
    // Whole warps only (the block reductions shuffle with full masks); anything else takes the widest CTA.
    f = {Forced::kTwoReads, 0,
         c >= 32 && c <= norm::kTwoReadsMaxThreads && c % 32 == 0 ? c : norm::kTwoReadsMaxThreads, 1};
  } else if (std::string_view(name) == "bulk") {
    f = {Forced::kBulk, std::clamp(c, 0, norm::kBulkMaxStages), b % 32 == 0 ? std::clamp(b, 0, norm::kBulkMaxThreads) : 0,
         std::max(cl, 0)};
  } else if (std::string_view(name) == "proposed") {
    f.tier = Forced::kProposed;
  } else if (std::string_view(name) == "block-lean") {
    f.tier = Forced::kBlockLean;
  } else if (std::string_view(name) == "short" && (c == 1 || c == 2 || c == 4) && (b == 0 || b == 1) &&
             (b == 0 || c <= 2) && cl >= 0) {
    f = {Forced::kShort, c, b, cl, lean == 1 ? 1 : 0};
  } else if (std::string_view(name) == "packed" && ((c >= 2 && c <= 8) ||
                                                   (c == 1 && b > 1)) &&
             (b <= 1 || ((b == 2 || b == 4 || b == 8) && c <= 4 && c * b <= 8))) {
    f = {Forced::kPacked, c, b, 1};  // b: rows a lane group (R), 1 if absent
  } else if (std::string_view(name) == "pblock" && (c == 16 || c == 32 || c == 64)) {
    f = {Forced::kPackedBlock, c, 0, 1};
  } else if (std::string_view(name) == "pwarp" && (c == 16 || c == 32 || c == 64) && b % 32 == 0 && b >= 0 &&
             b <= 512) {
    f = {Forced::kPackedWarp, c, b, 1};
  } else if (std::string_view(name) == "onepack") {
    f.tier = Forced::kOnePack;
  } else if (std::string_view(name) == "legacy") {
    f.tier = Forced::kLegacy;
  }
  return f;
}
Forced TheForcedTier() {
  static const Forced forced = ForcedTier();
  static const bool dynamic = std::getenv("JK_NORM_TIER_DYNAMIC") != nullptr;
  return dynamic ? ForcedTier() : forced;
}

// The per-block shared-memory opt-in limit of the current device (0 if the query fails).
int SmemPerBlockOptin() { return CachedDeviceAttribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>(0); }

template <typename T>
bool Vectorizable(const Params<T>& p) {
  constexpr int P = kVec16<T>;
  return p.n % P == 0 && IsAligned(p.x, 16) && IsAligned(p.y, 16) &&
         (p.scale == nullptr || IsAligned(p.scale, 16)) && (p.bias == nullptr || IsAligned(p.bias, 16));
}

template <typename T, Kind K, int P>
cudaError_t LaunchGroupPerRow(const Params<T>& p, cudaStream_t stream, int64_t packs) {
  // Short rows: the smallest lane group covering the row (P == 1 keeps whole warps: the scalar path is
  // for correctness, not speed, and fewer instantiations).
  const int w = P == 1 ? 32 : static_cast<int>(std::min<int64_t>(32, NextPow2(packs)));
  const int c = static_cast<int>(NextPow2(CeilDiv(packs, w)));
  return WithConstant<1, 2, 4, 8, 16, 32>(w, [&](auto W) {
    constexpr int kW = decltype(W)::value;
    constexpr int kR = kW < 32 ? 2 : 1;
    if constexpr (P == 1 && kW != 32) {
      return cudaErrorInvalidValue;
    } else {
      auto launch = [&](auto C) {
        constexpr int kC = decltype(C)::value;
        const int64_t rows_per_block = kGroupBlockThreads / kW * kR;
        const int64_t blocks = std::min(CeilDiv(p.outer, rows_per_block), int64_t{NumSMs()} * 64);
        if constexpr (P > 1 && kC * kR <= 2) {
          if (TheForcedTier().tier == Forced::kProposed) {
            norm::GroupPerRowRegistersEarlyParams<T, K, P, kC, kW, kR>
                <<<static_cast<unsigned>(blocks), kGroupBlockThreads, 0, stream>>>(p);
            return LastLaunchError();
          }
        }
        norm::GroupPerRowRegisters<T, K, P, kC, kW, kR>
            <<<static_cast<unsigned>(blocks), kGroupBlockThreads, 0, stream>>>(p);
        return LastLaunchError();
      };
      if constexpr (kW == 32 && kGroupMaxPacksPerLane<T, K> == 16) return WithConstant<1, 2, 4, 8, 16>(c, launch);
      else if constexpr (kW == 32 && kGroupMaxPacksPerLane<T, K> == 8) return WithConstant<1, 2, 4, 8>(c, launch);
      else if constexpr (kW == 32) return WithConstant<1, 2, 4>(c, launch);
      else return launch(std::integral_constant<int, 1>{});
    }
  });
}

// Float32 rows, 8 packs x `threads`, the register tier capped at 64 registers (two CTAs of 512 threads per
// SM; kMinBlocks = 2): float32 LayerNorm's rule in LaunchNormalize, and JK_NORM_TIER="block2 8 B" for any row.
// Other dtypes and the scalar path: cudaErrorNotSupported.
template <typename T, Kind K, int P>
cudaError_t LaunchBlockPerRowTwoPerSm(const Params<T>& p, cudaStream_t stream, int threads) {
  if constexpr (sizeof(T) != 4 || P != kVec16<T>) {
    return cudaErrorNotSupported;
  } else {
    const int64_t rows = std::min(p.outer, kMaxBlocks);
    norm::BlockPerRowRegistersTwoPerSm<T, K, P, 8><<<static_cast<unsigned>(rows), threads, 0, stream>>>(p, 1);
    return LastLaunchError();
  }
}

template <typename T, Kind K, int P>
cudaError_t LaunchBlockPerRow(const Params<T>& p, cudaStream_t stream, int c, int threads, int cluster) {
  const int64_t rows = std::min(p.outer, kMaxBlocks);
  return WithConstant<2, 4, 8>(c, [&](auto C) {
    constexpr int kC = decltype(C)::value;
    ClusterLaunch launch(dim3(static_cast<unsigned>(rows * cluster)), dim3(threads), stream, cluster);
    const cudaLaunchConfig_t& cfg = launch.cfg;
    // JK_NORM_TIER=block-lean (and proposed): the variant whose output pass ptxas allocates in fewer
    // registers.
    const bool lean = TheForcedTier().tier == Forced::kBlockLean || TheForcedTier().tier == Forced::kProposed;
    cudaError_t e = lean
                        ? cudaLaunchKernelEx(&cfg, norm::BlockPerRowRegisters<T, K, P, kC, true>, p, cluster)
                        : cudaLaunchKernelEx(&cfg, norm::BlockPerRowRegisters<T, K, P, kC>, p, cluster);
    return e != cudaSuccess ? e : LastLaunchError();
  });
}

// A failed runtime call also leaves its error as the thread's last error, which the next launch's
// LastLaunchError would report against an unrelated op: consume it, return it once.
cudaError_t ClearedError(cudaError_t e) {
  (void)cudaGetLastError();
  return e;
}

// The bulk tier: rows of at most kBulkMaxRowBytes (2-8 stages of one row per CTA, 64 KB per CTA by
// default, so 3 CTAs of 32 KB rows fit an SM), 256 threads with up to 8 packs each.
constexpr int64_t kBulkMaxRowBytes = 32 * 1024;
constexpr int64_t kBulkStageBytes = 64 * 1024;
constexpr int kBulkThreads = 256;         // the lab's default (JK_NORM_TIER=proposed)
constexpr int kBulkDefaultThreads = 128;  // the default dispatch: as fast or faster in every measured case

template <typename T, int P>
bool BulkSmemFits(const Params<T>& p) {
  return RunsSm90Code() && p.n * int64_t{sizeof(T)} <= kBulkMaxRowBytes &&
         p.n / P <= int64_t{8} * norm::kBulkMaxThreads;
}

template <typename T, Kind K, int P>
cudaError_t LaunchBulkSmem(const Params<T>& p, cudaStream_t stream, int stages, int threads, int max_ctas_per_sm) {
  const int64_t packs = p.n / P, row_bytes = p.n * int64_t{sizeof(T)};
  if (threads == 0) threads = kBulkThreads;
  threads = static_cast<int>(std::max<int64_t>(threads, CeilDiv(packs, 8)));  // at most 8 packs per thread
  const int c = static_cast<int>(NextPow2(CeilDiv(packs, threads)));
  if (c > 8 || threads > norm::kBulkMaxThreads) return cudaErrorInvalidValue;
  threads = static_cast<int>(CeilDiv(CeilDiv(packs, c), 32) * 32);  // no warp without work
  if (stages == 0) stages = static_cast<int>(std::clamp<int64_t>(kBulkStageBytes / row_bytes, 2, norm::kBulkMaxStages));
  const int64_t smem = stages * row_bytes;
  const int optin = SmemPerBlockOptin();
  if (smem > optin) return cudaErrorInvalidValue;
  return WithConstant<1, 2, 4, 8>(c, [&](auto C) {
    constexpr int kC = decltype(C)::value;
    auto* kernel = norm::BlockPerRowBulkSmem<T, K, P, kC>;
    // Raise the dynamic shared-memory limit once per device for this instantiation, to what the device
    // allows next to the kernel's static shared memory (static + dynamic <= the opt-in maximum: asking
    // for the whole opt-in maximum is cudaErrorInvalidValue, the first GPU run's failure).
    constexpr int kMaxDevices = 64;
    static int dynamic_limit[kMaxDevices] = {};
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return ClearedError(cudaErrorInvalidDevice);
    if (dynamic_limit[dev] == 0) {
      cudaFuncAttributes attr;
      cudaError_t e = cudaFuncGetAttributes(&attr, kernel);
      if (e != cudaSuccess) return ClearedError(e);
      const int limit = optin - static_cast<int>(attr.sharedSizeBytes);
      e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, limit);
      if (e != cudaSuccess) return ClearedError(e);
      dynamic_limit[dev] = limit;
    }
    if (smem > dynamic_limit[dev]) return cudaErrorInvalidValue;
    int per_sm = 0;
    const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem);
    if (e != cudaSuccess) return ClearedError(e);
    if (per_sm < 1) return cudaErrorInvalidConfiguration;
    if (max_ctas_per_sm > 0) per_sm = std::min(per_sm, max_ctas_per_sm);
    const int64_t blocks = std::min(p.outer, int64_t{NumSMs()} * per_sm);
    kernel<<<static_cast<unsigned>(blocks), threads, static_cast<size_t>(smem), stream>>>(p, stages);
    return LastLaunchError();
  });
}

template <typename T, Kind K, int P>
cudaError_t LaunchTwoReads(const Params<T>& p, cudaStream_t stream, bool stats_only, int threads = 0) {
  const int64_t packs = p.n / P;
  if (threads == 0) threads = static_cast<int>(std::min<int64_t>(norm::kTwoReadsMaxThreads, CeilDiv(packs, 32) * 32));
  const int64_t blocks = std::min(p.outer, kMaxBlocks);
  norm::BlockPerRowTwoReads<T, K, P><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(p, stats_only);
  return LastLaunchError();
}

template <typename T, Kind K>
cudaError_t LaunchStrided(const Params<T>& p, cudaStream_t stream, bool stats_only, const Workspace& ws = {}) {
  // Long axes split over CTAs where the lowering gave a workspace (norm_split.cuh); else the column tile held in
  // registers (norm_strided.cuh) where its configuration applies (tile::DefaultConfig); else the scalar two-read
  // kernel.
  if (!stats_only) {
    if (tile::SplitEnabled()) {
      const cudaError_t e = norm::LaunchStridedSplit<T, K>(p, stream, ws);
      if (e != cudaErrorNotSupported) return e;
    }
    const cudaError_t e = norm::LaunchStridedTile<T, K>(p, stream, RunsSm90Code());
    if (e != cudaErrorNotSupported) return e;
  }
  const int64_t tiles = CeilDiv(p.outer * p.inner, 32);
  // Slices of n per column: enough threads for ~2048 per SM, at least 8 elements per slice.
  const int64_t want = CeilDiv(int64_t{NumSMs()} * 64, tiles);
  // At least 4 slices: a 32-thread block would hit the 32-blocks-per-SM limit at half occupancy.
  const int slices = static_cast<int>(
      std::clamp<int64_t>(std::min(want, CeilDiv(p.n, 8)), 4, norm::kStridedMaxSlices));
  const int64_t blocks = std::min(tiles, kMaxBlocks);
  norm::StridedTwoReads<T, K><<<static_cast<unsigned>(blocks), dim3(32, slices), 0, stream>>>(p, stats_only);
  return LastLaunchError();
}

// The packed short-row tier's packs per lane C and rows per lane group R in the default dispatch (C = 0: not taken);
// the lanes per row follow, W = row bytes / 16 / C. Measured on an H200, 49152 rows:
//   bf16/f16, 32-256 columns (bench/lab/norm_packed_h200.md, CUPTI, one process with jnp): RMSNorm fastest
//     with C = 2; LayerNorm with 4 at 64 and 128 (5.84-5.92 us against 6.34-6.35 with 2), with 2 at 32 and
//     256 (at 64, two rows of C = 2 since session 29, below). Every setting of the best beat the group kernel.
//     LayerNorm at 128 keeps 4 packs (80 registers, 3 CTAs an SM, 1.9 waves) over 2 (48 registers, 5 CTAs, 1.2
//     waves): bench/lab/s27_h200.md call 5, the committed code,
//     4 rounds in one process, us: bf16 5.65-5.68 against 6.26-6.40, f16 5.78-5.86 against 6.24-6.38 (jnp
//     5.49-5.63), and the benchmarks agree (4 packs 5.86-6.10 in session 26's run, 2 packs 6.34-6.38 in session
//     27's). Session 26's call 6 had measured the reverse (6.37 / 6.43 against 6.08 / 5.95, on a build with its
//     register-cap lab patch, which leaves the 4-pack kernel alone) and made 2 the default; why it differed is not
//     understood. Capping the 2-pack kernel at 40 registers (one wave) spilled 36 bytes and lost (8.2-8.5).
//   float32, 16-128 columns (bench/lab/s15_h200.md calls 1 and 3, against the persistent short-row tier, us
//     (jnp)): LayerNorm 16: 2.34 -> 2.05 (1.98), 32: 3.31 -> 3.04 (2.88), 64: 5.76 -> 5.57 (5.47), 128: 13.97
//     -> 13.46 (13.86); RMSNorm 16: 2.21 -> 2.00 (2.02), 32: 3.07 -> 2.85 (3.04), 64: 5.55 -> 5.70 (5.06), so
//     RMSNorm at 64 kept the persistent tier until session 29's two rows a lane group (below); 128: 13.76 -> 13.42
//     (14.08). C = 1 lost at 32 columns (3.55-3.66), 4 at every length (a quarter of the threads: 4.30-4.35 at
//     32).
//   Longer rows (session 18, bench/lab/s18_norm_lab_h200.txt: cudaEvent time after an L2 flush, median of
//     15, every variant twice in one process), us:
//     LayerNorm 16-bit 512: group kernel 29.8-30.9 -> C = 4 (W = 16, two rows per warp) 25.8 (C = 2: 26.1);
//       the group kernel was issue-bound (bench/lab/s14_h200.md call 5: 1.8x RMSNorm's instructions).
//     LayerNorm 16-bit 1024: packed row tier 52.6-54.1 -> C = 4 (W = 32) 49.7-50.3 (C = 8: 61-62).
//     RMSNorm 16-bit 512: 25.6-25.9 -> C = 4 25.0 (C = 8: 24.9); at 1024 a tie (48.4 against 49.0-49.5): kept.
//     LayerNorm float32 256: 28.3 -> C = 4 25.0; 512: 50.2-50.7 -> C = 8 48.6-49.0 (C = 4: 49.6); 1024:
//       101.1 -> C = 8 97.0 (117-127 registers: two CTAs of 256 per SM, still ahead).
//     RMSNorm float32 256-1024: ties (within 1%): kept. 16-bit 2048 (C = 8): lost (LayerNorm 101 -> 115,
//       its 222 registers; RMSNorm 95.5 -> 97).
//   Rows of 3 and 6 packs per lane (session 18, the same lab, not in the benchmark's sweep: hidden sizes such
//     as 384, 768 and 1536), us:
//     LayerNorm 16-bit 768: 43.7-44.8 -> C = 3 (W = 32) 37.6-37.9 (C = 6: 38.4-38.8); 1536: 82.3 -> C = 6 74.9.
//     RMSNorm 16-bit 768: 38.5 -> C = 6 (W = 16) 36.8 (C = 3: 37.0-37.2); 1536: a loss (72.5 -> 73.6): kept.
//     LayerNorm float32 384: 39.9 -> C = 6 (W = 16) 36.8-37.0; 768: 81.3 -> C = 6 73.6. RMSNorm float32 384
//       and 768: a tie or a loss (36.6 -> 36.9-37.4, 73.4-73.5 -> 73.5-73.7): kept.
//     768-byte rows, C = 3 (W = 16): LayerNorm 16-bit 384 28.7-29.4 -> 19.9 (C = 6: 20.8-21.2), RMSNorm 16-bit
//       384 20.7-21.4 -> 19.6-19.7; float32 192 LayerNorm 23.7-24.3 -> 19.6, RMSNorm 20.0-21.2 -> 19.6.
//     384-byte rows (16-bit 192) take C = 3 (W = 8) by analogy, not from a lab comparison: the CUPTI sweep
//     against jnp (bench/lab/s18_norm_odd_h200.txt) measured them before (0.67-0.87x on the lane groups) and
//     after (1.06-1.26x). C = 1 with one row a group (above) is no longer instantiated.
//   Two rows a lane group (R = 2; session 28, bench/lab/s28_h200.md: 3 rounds in one process, each starting one
//     variant later, CUPTI, us, default -> R = 2 (jnp)): a lane's 2 rows share its held parameters and the loop's
//     fixed cost, and their loads and reductions interleave.
//     LayerNorm float32 32 (C = 2, W = 4): 3.10-3.12 -> 2.94-2.98 (2.91-2.96)
//     LayerNorm float16 128 (C = 2, W = 8, against C = 4, W = 4): 5.73-5.94 -> 5.58-5.74 (5.54-5.57)
//     RMSNorm float32 128 (C = 2, W = 16): 13.30-13.46 -> 13.20-13.34 (13.87-14.13)
//     It lost for bfloat16 LayerNorm at 128 (5.62-5.71 -> 5.95-6.05, in session 27's lab too: not understood; the
//     two kernels differ in the conversions, bf16 a shift or mask, f16 a cvt), for every 16-bit 32-column row
//     (LayerNorm 2.27 -> 2.54) and for float32 LayerNorm 128 (13.39 -> 13.65). 4 rows (C = 1 or 2), C = 4 with 2
//     rows, and 8 rows of one pack (Triton's layout for these rows: 16 lanes a row) lost everywhere (the table).
//   64 columns (session 29, bench/lab/s29_h200.md call 6, the same method; not a sweep point, and the rows under
//     jnp then), default -> R = 2 (jnp), us:
//     LayerNorm bfloat16 (C = 4 -> C = 2, W = 4): 3.97-4.00 -> 3.49-3.55 (3.81-3.86)
//     LayerNorm float16 (the same):                3.90-4.02 -> 3.23-3.26 (3.81-3.82)
//     LayerNorm float32 (C = 2 -> C = 1, W = 16):  5.86-5.92 -> 5.58-5.79 (5.41-5.62)
//     RMSNorm float32 (the persistent tier -> C = 2, W = 8): 5.57-5.66 -> 4.70-4.83 (5.10-5.20)
//   Rows of 6, 12 and 24 packs (session 33, bench/lab/s33_h200.md call 1, the same method; off the sweep; the
//     16-bit rows were on the lane groups, float32 on the persistent tier), default -> the best (jnp), us:
//     16-bit 48 (6 packs, C = 3, W = 2): LayerNorm bf16 / f16 5.12 / 5.26 -> 2.90 / 2.91 (3.68 / 3.58); RMSNorm
//       3.76 / 3.81 -> 2.72 / 2.74 (2.78 / 2.82). C = 6 (one lane a row) lost everywhere (5.7-6.2).
//     16-bit 96 (12 packs, C = 3, W = 4): LayerNorm 9.25 / 9.04 -> 5.09 / 5.15 (5.18 / 5.10; R = 2: 5.81 / 5.25);
//       RMSNorm with R = 2: 6.46 / 6.37 -> 4.05 / 4.10 (5.33 / 5.23; R = 1: 4.70 / 4.75).
//     float32 24 (6 packs, C = 3): LayerNorm 3.33 -> 2.77 (2.62), RMSNorm 2.91 -> 2.75 (2.51): still under jnp.
//     float32 48 (12 packs, C = 3, R = 2): LayerNorm 5.38 -> 4.14 (4.45), RMSNorm 4.90 -> 4.06 (4.08; R = 1 4.08).
//     float32 96 (24 packs, C = 3, W = 8): LayerNorm 9.73 -> 9.14 (9.44; R = 2 and C = 6 9.09-9.10), RMSNorm
//       9.76 -> 9.14 (9.94).
//   Rows of 10 / 20 / 40 packs with C = 5 and 14 / 28 / 56 with C = 7 (session 33, call 2, the same method), the
//     lane groups (16-bit) or the persistent tier (float32 40 / 56) or the group kernel -> C = 5 / 7 (jnp), us:
//     16-bit LayerNorm bf16 (f16) 80: 9.07 -> 5.20 (4.91; f16 8.90 -> 5.30, 4.77); 160: 16.56 -> 7.97 (10.02);
//       320: 28.88 -> 18.62 (23.17); 112: 9.31 -> 6.70 (5.58); 224: 18.00 -> 16.00 (14.05); 448: 30.77 -> 23.92
//       (30.62). RMSNorm 80: 6.22 -> 5.04 (4.82); 160: 11.49 -> 7.14 (7.98); 320: 19.92 -> 16.75 (20.50); 224:
//       13.89 -> 11.68 (12.32); 448: 24.21 -> 22.58 (26.26); at 112 C = 7 lost (6.58 -> 6.82; jnp 5.78): kept.
//       80, 112 and LayerNorm 224 stay under jnp (0.83-0.96x).
//     float32 80: LayerNorm 9.15 -> 7.10 (8.08), RMSNorm 8.19 -> 7.42 (7.95); 160: 23.22 -> 16.91 (22.19), 17.39
//       -> 16.69 (20.75); 112: 11.84 -> 11.70 (11.95), 11.90 -> 11.34 (11.92); 224: 27.17 -> 22.62 (28.40), 23.22
//       -> 22.77 (26.94). At 40 and 56 columns (10 / 14 packs) C = 5 / 7 tied or lost (LayerNorm 40: 5.15 ->
//       5.10, RMSNorm 40: 4.32 -> 4.98, 56: 5.5 -> 6.8-7.1; jnp 3.6-5.0): those keep the persistent tier.
template <typename T, Kind K>
norm::PackedConfig PackedDefault(int64_t n) {
  constexpr bool kLayer = K == Kind::kLayerNorm;
  if constexpr (sizeof(T) == 2) {
    switch (n) {
      case 32: case 256: return {2, 1};
      case 48: return {3, 1};
      case 64: return {2, kLayer ? 2 : 1};
      case 96: return {3, kLayer ? 1 : 2};
      case 80: case 160: case 320: return {5, 1};
      case 112: return {kLayer ? 7 : 0, 1};
      case 224: case 448: return {7, 1};
      case 128:
        if (!kLayer) return {2, 1};
        return std::is_same_v<T, __half> ? norm::PackedConfig{2, 2} : norm::PackedConfig{4, 1};
      case 192: case 384: return {3, 1};
      case 512: return {4, 1};
      case 768: return {kLayer ? 3 : 6, 1};
      case 1024: return {kLayer ? 4 : 0, 1};
      case 1536: return {kLayer ? 6 : 0, 1};
      default: return {0, 1};
    }
  } else {
    switch (n) {
      case 16: return {2, 1};
      case 24: case 96: return {3, 1};
      case 32: return {2, kLayer ? 2 : 1};
      case 48: return {3, 2};
      case 80: case 160: return {5, 1};
      case 112: case 224: return {7, 1};
      case 128: return {2, kLayer ? 1 : 2};
      case 64: return kLayer ? norm::PackedConfig{1, 2} : norm::PackedConfig{2, 2};
      case 192: return {3, 1};
      case 256: return {kLayer ? 4 : 0, 1};
      case 384: case 768: return {kLayer ? 6 : 0, 1};
      case 512: case 1024: return {kLayer ? 8 : 0, 1};
      default: return {0, 1};
    }
  }
}

// The packed 16-bit row tier's configuration for bf16/f16 rows of n columns in the default dispatch (elems 0:
// not taken). Measured on an H200 (bench/lab/norm_packed_block_h200.md: 49152 rows, CUPTI, every
// configuration and jnp in one process), a CTA per row with E elements per thread against the tiers before
// it (lane groups at 1024, BlockPerRowRegisters at 2048-4096, the bulk tier at 8192-16384, two reads at
// 32768), bf16 / f16:
//   LayerNorm  1024: E = 32  63.9 / 55.3 -> 55.3 / 53.1 us   (jnp 67.1 / 66.9)
//              2048-32768: E = 64, 81-87% -> 95-97% of the copy ceiling (71-74% -> 91-93% at 32768); at 2048
//              116.7 / 112.8 -> 101.6 / 100.0 (E = 32: 102.3 / 99.5, the default until session 41, whose
//              benchmarks had bf16 at 89.8-91% of copy; bench/lab/s41_h200.md calls 8-9, E = 64 / 32 with the
//              ceiling measured in the same process: bf16 92.5 / 91.6-91.8%, f16 94.3-94.4 / 94.0-94.4%)
//   RMSNorm    1024-4096: E = 16 (1.07-1.14x jnp, where the old tiers lost at 2048-4096: 0.93-1.00x);
//              8192-16384: E = 32 (97%); 32768: E = 64 (76-78% -> 96%)
// LayerNorm's two reductions favour fewer, fuller threads per row (E = 16 lost to the old tiers at 4096-8192);
// RMSNorm's one reduction prefers more threads up to 4096 columns. At 512 columns the lane groups stay (the
// packed warp-per-row and block layouts tied or lost: LayerNorm 31.6-34.0 us against 30.1-31.1); 513-1023
// columns are not measured and follow 1024. Longer rows (> 32768) are not taken: 512 threads x 64.
template <Kind K>
norm::PackedBlockConfig PackedBlockDefault(int64_t n) {
  if (n <= 512 || n > norm::kPackedBlockMaxColumns) return {0, false, 0};
  if (K == Kind::kLayerNorm) return {n < 2048 ? 32 : 64, false, 0};
  return {n <= 4096 ? 16 : n <= 16384 ? 32 : 64, false, 0};
}

// Rows the one-pack lanes take by default. H200, 49152 rows, CUPTI best of 5 rotated rounds, one process with jnp
// (bench/lab/s40_h200.md calls 8, 11), us, one-pack / packed tier / jnp:
//   bf16/f16 32 columns   LayerNorm 1.97-1.98 / 2.27 / 2.08-2.14, RMSNorm 1.86 / 1.95-1.98 / 1.89
//   float32 32 columns    LayerNorm 2.85 / 2.99 / 2.96, RMSNorm 2.75 / 2.85 / 3.01 (2 rows a thread since session 42:
//                         LayerNorm 2.78, RMSNorm 2.56-2.59, jnp 2.88-2.91 / 3.04-3.10, bench/lab/s42_h200.md)
//   bf16/f16 128 columns  LayerNorm 4.96-5.10 / 5.52-5.68 / 5.39-5.50
//                         RMSNorm (held words, bench/lab/s41_h200.md call 2) 4.66-4.67 / 5.41-5.50 / 5.31-5.50
//   bf16/f16 64 columns   (session 42, bench/lab/s42_h200.md call 7) LayerNorm 2.85-2.88 / 3.26-3.55 / 3.78-3.84,
//                         RMSNorm bf16 2.66 / 2.85 / 3.04
//   float32 16 / 64       (session 42, calls 11-12) LayerNorm 1.86 / 2.05 / 1.98 and 5.38 / 5.63 / 5.36-5.47,
//                         RMSNorm 1.82 / 1.98 / 2.02 and 4.59 / 4.77 / 4.99-5.02
template <typename T>
constexpr bool OnePackDefault(int64_t n) {  // both norms alike
  if constexpr (sizeof(T) == 2) return n == 32 || n == 64 || n == 128;
  else return n == 16 || n == 32 || n == 64;
}

// Chooses the tier for a full normalisation.
template <typename T, Kind K>
cudaError_t LaunchNormalize(const Params<T>& p, cudaStream_t stream, const Workspace& ws) {
  if (p.outer == 0 || p.n == 0 || p.inner == 0) return cudaSuccess;
  if (p.inner > 1) return LaunchStrided<T, K>(p, stream, false, ws);
  const Forced forced = TheForcedTier();
  // The default dispatch, or the one before the packed row tier (JK_NORM_TIER=legacy).
  const bool dflt = forced.tier == Forced::kNone || forced.tier == Forced::kLegacy;
  if (!Vectorizable(p)) {
    // Rows of n % P != 0 over aligned x and y past the lane groups: 16-byte loads of each row's window of aligned
    // packs (norm_window.cu: 1001 columns 0.11-0.23x -> 1.12-1.34x jnp; the lane groups' rows, such as 97, lost).
    if (dflt) {
      const cudaError_t e = norm::LaunchWindowRows<T, K>(p, stream, p.n > 32 * kGroupMaxPacksPerLane<T, K>);
      if (e != cudaErrorNotSupported) return e;
    }
    if (p.n <= 32 * kGroupMaxPacksPerLane<T, K>) return LaunchGroupPerRow<T, K, 1>(p, stream, p.n);
    return LaunchTwoReads<T, K, 1>(p, stream, false);
  }
  constexpr int P = kVec16<T>;
  const int64_t packs = p.n / P;
  if (forced.tier == Forced::kBlock && int64_t{forced.c} * forced.b * forced.cluster >= packs)
    return LaunchBlockPerRow<T, K, P>(p, stream, forced.c, forced.b, forced.cluster);
  if (forced.tier == Forced::kBlock2 && int64_t{forced.c} * forced.b >= packs) {
    const cudaError_t e = LaunchBlockPerRowTwoPerSm<T, K, P>(p, stream, forced.b);
    if (e != cudaErrorNotSupported) return e;  // else the default dispatch
  }
  if (forced.tier == Forced::kTwoReads) return LaunchTwoReads<T, K, P>(p, stream, false, forced.b);
  if (forced.tier == Forced::kBulk && packs > 32 && BulkSmemFits<T, P>(p))
    return LaunchBulkSmem<T, K, P>(p, stream, forced.c, forced.b, forced.cluster);
  if (forced.tier == Forced::kPacked) {
    const cudaError_t e = norm::LaunchShortRowsPacked<T, K>(p, stream, {forced.c, std::max(forced.b, 1)});
    if (e != cudaErrorNotSupported) return e;  // else the default dispatch
  }
  // Rows of 64 B - 4 KB with one scale/bias row: the packed short-row tier (norm_short_packed.cuh: row length
  // and packs per lane compile-time, 32-bit offsets, no per-element predicates, the row converted once;
  // bf16 LayerNorm at 128 columns: 275 SASS instructions per kernel for 16 elements per lane, the group
  // kernel 1300 for 2 rows of 8), where PackedDefault says. H200, 49152 rows, 16-bit: LayerNorm
  // 32 cols 3.30 -> 2.27 us (jnp 2.14), 128 cols 9.30 -> 5.84 (jnp 5.47), 256 cols 18.58 -> 13.57 (jnp
  // 16.25); RMSNorm 32 cols 2.50 -> 2.05 (jnp 1.89), 128 cols 6.67 -> 5.44 (jnp 5.50).
  // One-pack lanes (norm_short_onepack.cuh: XLA's Triton layouts, W lanes a row with one pack each, R rows a thread,
  // no loop) where OnePackDefault says. JK_NORM_TIER="packed 2 1" (the packed tier's default there) or any other
  // forced tier keeps them out; "onepack" sends every row they fit to them.
  if (forced.tier == Forced::kOnePack || (dflt && OnePackDefault<T>(p.n))) {
    const cudaError_t e = norm::LaunchShortRowsOnePack<T, K>(p, stream);
    if (e != cudaErrorNotSupported) return e;  // else (grouped parameters, huge arrays) the tiers below
  }
  if (dflt) {
    const norm::PackedConfig cfg = PackedDefault<T, K>(p.n);
    if (cfg.packs_per_lane > 0) {
      const cudaError_t e = norm::LaunchShortRowsPacked<T, K>(p, stream, cfg);
      if (e != cudaErrorNotSupported) return e;  // else (grouped parameters, huge arrays) the tiers below
    }
  }
  if (forced.tier == Forced::kPackedBlock || forced.tier == Forced::kPackedWarp) {
    const cudaError_t e =
        norm::LaunchBlockPerRowPacked<T, K>(p, stream, {forced.c, forced.tier == Forced::kPackedWarp, forced.b});
    if (e != cudaErrorNotSupported) return e;  // else the default dispatch
  }
  if (forced.tier == Forced::kNone && sizeof(T) == 2) {
    const norm::PackedBlockConfig cfg = PackedBlockDefault<K>(p.n);
    if (cfg.elems > 0) {
      const cudaError_t e = norm::LaunchBlockPerRowPacked<T, K>(p, stream, cfg);
      if (e != cudaErrorNotSupported) return e;
    }
  }
  if (forced.tier == Forced::kShort && norm::ShortRowsFit(packs))
    return norm::LaunchShortRows<T, K>(p, stream, {forced.c, forced.b == 1, forced.cluster, forced.lean == 1});
  // Float32 rows of 3-32 packs (12-128 columns): the persistent short-row tier (norm_short.cuh), 2 rows
  // per lane group and the next step's rows loaded before this step's reductions. Measured on an H200
  // (bench/lab/norm_short_lab.py, 49152 rows, CUPTI, one process with jnp): float32 LayerNorm 4.91 -> 3.33
  // us at 32 columns (jnp 2.94) and 17.78 -> 13.86 us at 128 (jnp 13.65); RMSNorm 3.26 -> 3.14 and 13.70
  // -> 13.73 (a tie). The group kernel's float32 LayerNorm at 32 columns took 58 registers, 8 CTAs of 128
  // threads per SM: its 1536 CTAs ran in 1.45 waves. Every short-row configuration tied or lost on
  // bf16/f16 rows (32-1024 columns) and float32 rows of 512 (the rows of the packed tier above excepted).
  if (dflt && sizeof(T) == 4 && packs >= 3 && packs <= 32) {
    const cudaError_t e = norm::LaunchShortRows<T, K>(p, stream, {2, true, 0, false});
    if (e != cudaErrorInvalidConfiguration) return e;  // else no occupancy figure: the group kernel
  }
  // Float32 LayerNorm rows of 1025-4095 and 8193-16383 columns (16-byte packs): a CTA per row with 8 packs a thread,
  // capped at 64 registers (BlockPerRowRegistersTwoPerSm) but at 2048 columns. Uncapped, the register tier takes 85
  // registers: at 12288 columns (384 threads) one CTA per SM, 59% of the copy ceiling, 0.82x jnp. H200, session 19
  // (bench/lab/s19_h200.md), the benchmark's method, the tiers before -> this one, x jnp (% of copy), two runs:
  //   1536 (lane groups)          0.98-0.99x (83-85%) -> 1.07-1.08x (91-92%)
  //   2560 / 3072 (CTA, 4 packs)  0.95-0.97x (82-83%) -> 1.11-1.13x (94-96%)
  //   8200 / 10240 (CTA, 8 packs) 1.00x (73%) / 1.06x (81%) -> 1.20x (87%) / 1.14x (87%)   (one run)
  //   12288 / 14336               0.82x (59%) / 0.87x (62%) -> 1.13-1.17x (81-84%) / 1.23x (87%)
  // The cap lost at 2048 (lane groups 1.03x -> 0.93-0.94x), where the same CTA uncapped (64 threads) wins since
  // session 41 (bench/lab/s41_h200.md calls 8-9, ceiling measured in the same process: 203.9-205.9 us, 91.7-92.0%,
  // against the lane groups' 207.0-208.2, 90.7%). The cap lost at 5120 (1.01x -> 0.97-0.98x) and 6144 (1.04x ->
  // 1.01-1.02x) too, though a standalone lab with cold caches had it ahead there; and at 4096 / 8192 in session 7
  // (bench/lab/norm_block2_h200.txt: 448 against 410 us, 953 against 857). Those keep their tiers.
  const bool f32_ln_block = p.n > 1024 && (p.n < 4096 || (p.n > 8192 && p.n < kTwoReadsMinColumns));
  if (forced.tier == Forced::kNone && K == Kind::kLayerNorm && sizeof(T) == 4 && f32_ln_block) {
    const int threads = static_cast<int>(CeilDiv(CeilDiv(packs, 8), 32) * 32);
    if (p.n == 2048) return LaunchBlockPerRow<T, K, P>(p, stream, 8, threads, 1);
    const cudaError_t e = LaunchBlockPerRowTwoPerSm<T, K, P>(p, stream, threads);
    if (e != cudaErrorNotSupported) return e;  // else (the scalar path) the tiers below
  }
  if (packs <= 32 * kGroupMaxPacksPerLane<T, K>) return LaunchGroupPerRow<T, K, P>(p, stream, packs);
  // Float32 LayerNorm rows of 6145-8192 columns: one CTA of the cluster tier's row-pairs form (two rows a CTA, the
  // parameters in shared memory; norm_cluster_pairs.cu has the figures: 8192 columns 88.3% -> 91.3% of copy, 7168
  // 74.1% -> 88.5%).
  if (forced.tier == Forced::kNone) {
    const cudaError_t e = norm::LaunchRowPairsShort<T, K>(p, stream);
    if (e != cudaErrorNotSupported) return e;
  }
  if (forced.tier == Forced::kProposed && BulkSmemFits<T, P>(p)) return LaunchBulkSmem<T, K, P>(p, stream, 0, 0, 0);
  // Rows of 16-32 KB (16-bit n >= 8192; float32 LayerNorm at n = 8192): persistent CTAs of 128 threads
  // fed by bulk copies, the next rows' loads in flight through each row's reductions. Measured on an
  // H200 (bench/lab/norm_half_gpu.sh, 49152 rows): 16-bit LayerNorm/RMSNorm 3.5-3.9 TB/s at 8192 and
  // 16384 columns, where the register tiers ran at 2.4-3.4 (RMSNorm f16 at 8192: a tie); float32
  // LayerNorm 3.8 against 3.4-3.6. At 4096 columns and below, or float32 RMSNorm, it lost or tied.
  // Float32 LayerNorm at 8192 columns stayed on the bulk tier below until session 32 (now the row-pairs form above).
  // The register tier capped at 64
  // registers (BlockPerRowRegistersTwoPerSm, JK_NORM_TIER="block2 8 256") was faster in two lab runs on an
  // H200 (827.9 and 832.3 us against 854.2; XLA command buffers off, bench/lab/norm_block2_h200.txt) but
  // took 951.7 us in the benchmark run that followed (command buffers on, the default; the bulk tier: 863.9
  // in session 5's). Timed side by side in separate benchmark processes (session 7): bulk 857 us against 953
  // with command buffers on, 855 / 946 off, so the bulk tier stays.
  if (dflt && BulkSmemFits<T, P>(p) && p.n >= 8192 &&
      (sizeof(T) == 2 || K == Kind::kLayerNorm))
    return LaunchBulkSmem<T, K, P>(p, stream, 0, kBulkDefaultThreads, 0);
  // Float32 RMSNorm keeps the register tier up to 16384 columns (8 packs x 512 threads): H200, 49152 x
  // 16384 (bench/lab/norm_block2_h200.txt) 1560.9 us against 1635.2 on two reads (92% -> 96% of copy); the
  // benchmark run that followed: 1575.1 us (95%, 1.20x jnp; session 5's: 1651.4 on two reads).
  const bool rms_registers = K == Kind::kRmsNorm && sizeof(T) == 4 && p.n == kTwoReadsMinColumns;
  if (p.n < kTwoReadsMinColumns || rms_registers) {
    // One CTA per row, C packs per thread, no thread idle: the best of the measured configurations at
    // 4096 and 8192 columns (C = 4 with 128-256 threads, C = 8 with 256 threads). RMSNorm on bf16/f16
    // with C = 4 measured at 1.6 TB/s (C = 8: 3.0 TB/s at 16384 columns), so it always takes C = 8.
    // Float32 LayerNorm from 4096 columns: C = 8 with 128 threads, 446.8 -> 409.1 us at 4096 (0.96x ->
    // 1.05x jnp, 92% of the copy ceiling; bench/lab/norm_packed_block_h200.md; the bulk tier 418.6-430.8).
    const bool half_rms = K == Kind::kRmsNorm && sizeof(T) == 2;
    const bool f32_layer_norm = K == Kind::kLayerNorm && sizeof(T) == 4 && packs >= 1024;
    const int c = packs >= 2048 || half_rms || f32_layer_norm ? 8 : 4;
    const int64_t threads = CeilDiv(CeilDiv(packs, c), 32) * 32;
    if (threads <= norm::kBlockMaxThreads) return LaunchBlockPerRow<T, K, P>(p, stream, c, static_cast<int>(threads), 1);
  }
  if (forced.tier == Forced::kNone) {
    // Long rows read once: held partly in registers, partly in shared memory (RMSNorm float32) or in a
    // thread-block cluster's registers (norm_cluster.cu), where their rules say; else read once through a
    // shared-memory ring (norm_long.cu), where that one's says.
    cudaError_t e = norm::LaunchClusterRows<T, K>(p, stream);
    if (e != cudaErrorNotSupported) return e;
    e = norm::LaunchLongRows<T, K>(p, stream);
    if (e != cudaErrorNotSupported) return e;
  }
  return LaunchTwoReads<T, K, P>(p, stream, false);
}

// Statistics only: the two-read kernels without their second pass.
template <typename T, Kind K>
cudaError_t LaunchStatsOnly(const Params<T>& p, cudaStream_t stream) {
  if (p.outer == 0 || p.n == 0 || p.inner == 0) return cudaSuccess;
  if (p.inner > 1) return LaunchStrided<T, K>(p, stream, true);
  if (norm::LegacyStatsApply()) {
    if (Vectorizable(p)) return LaunchTwoReads<T, K, kVec16<T>>(p, stream, true);
    return LaunchTwoReads<T, K, 1>(p, stream, true);
  }
  // Rows contiguous: a lane group or a CTA per row, several packs per thread in flight
  // (norm_stats_apply.cuh).
  if (Vectorizable(p)) return norm::LaunchRowStats<T, K, kVec16<T>>(p, stream);
  return norm::LaunchRowStats<T, K, 1>(p, stream);
}

template <typename T, Kind K>
cudaError_t LaunchApply(const Params<T>& p, cudaStream_t stream) {
  const int64_t total = p.outer * p.n * p.inner;
  if (total == 0) return cudaSuccess;
  if (p.inner == 1 && !norm::LegacyStatsApply()) {
    // Rows contiguous: row-wise, 16-byte packs where aligned (norm_stats_apply.cuh).
    if (Vectorizable(p)) return norm::LaunchRowApply<T, K, kVec16<T>>(p, stream);
    return norm::LaunchRowApply<T, K, 1>(p, stream);
  }
  const int64_t blocks = std::min(CeilDiv(total, 256), int64_t{NumSMs()} * 32);
  norm::ApplyStats<T, K><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(p);
  return LastLaunchError();
}

template <typename T>
Params<T> MakeParams(const void* x, const void* scale, const void* bias, void* y, float* mean, float* rstd,
                     const NormShape& s, float epsilon) {
  Params<T> p;
  p.x = static_cast<const T*>(x);
  p.scale = static_cast<const T*>(scale);
  p.bias = static_cast<const T*>(bias);
  p.y = static_cast<T*>(y);
  p.mean = mean;
  p.rstd = rstd;
  p.outer = s.outer;
  p.n = s.n;
  p.inner = s.inner;
  // max(1, .): a zero-row array with groups >= 1 would divide by zero (it launches nothing anyway).
  p.scale_rows_per_group = std::max<int64_t>(1, s.outer / std::max<int64_t>(1, s.scale_groups));
  p.bias_rows_per_group = std::max<int64_t>(1, s.outer / std::max<int64_t>(1, s.bias_groups));
  p.epsilon = epsilon;
  return p;
}

enum class Mode { kNormalize, kStatsOnly, kApply };

template <Kind K, Mode M>
cudaError_t Dispatch(cudaStream_t stream, DType dtype, const void* x, const void* scale, const void* bias,
                     void* y, float* mean, float* rstd, const NormShape& shape, float epsilon,
                     const Workspace& ws = {}) {
  return DispatchFloat<float, __nv_bfloat16, __half>(dtype, cudaErrorInvalidValue, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Params<T> p = MakeParams<T>(x, scale, bias, y, mean, rstd, shape, epsilon);
    if constexpr (M == Mode::kNormalize) return LaunchNormalize<T, K>(p, stream, ws);
    else if constexpr (M == Mode::kStatsOnly) return LaunchStatsOnly<T, K>(p, stream);
    else return LaunchApply<T, K>(p, stream);
  });
}

}  // namespace

cudaError_t LaunchLayerNorm(cudaStream_t stream, DType dtype, const void* x, const void* scale,
                            const void* bias, void* y, float* mean, float* rstd, const NormShape& shape,
                            float epsilon, const Workspace& ws) {
  return Dispatch<Kind::kLayerNorm, Mode::kNormalize>(stream, dtype, x, scale, bias, y, mean, rstd, shape,
                                                      epsilon, ws);
}

cudaError_t LaunchRmsNorm(cudaStream_t stream, DType dtype, const void* x, const void* scale, void* y,
                          const NormShape& shape, float epsilon, const Workspace& ws) {
  return Dispatch<Kind::kRmsNorm, Mode::kNormalize>(stream, dtype, x, scale, nullptr, y, nullptr, nullptr,
                                                    shape, epsilon, ws);
}

cudaError_t LaunchLayerNormStats(cudaStream_t stream, DType dtype, const void* x, float* mean, float* m2,
                                 const NormShape& shape) {
  return Dispatch<Kind::kLayerNorm, Mode::kStatsOnly>(stream, dtype, x, nullptr, nullptr, nullptr, mean, m2,
                                                      shape, 0.f);
}

cudaError_t LaunchRmsNormStats(cudaStream_t stream, DType dtype, const void* x, float* mean_square,
                               const NormShape& shape) {
  return Dispatch<Kind::kRmsNorm, Mode::kStatsOnly>(stream, dtype, x, nullptr, nullptr, nullptr, mean_square,
                                                    nullptr, shape, 0.f);
}

cudaError_t LaunchLayerNormApply(cudaStream_t stream, DType dtype, const void* x, const float* mean,
                                 const float* rstd, const void* scale, const void* bias, void* y,
                                 const NormShape& shape) {
  return Dispatch<Kind::kLayerNorm, Mode::kApply>(stream, dtype, x, scale, bias, y, const_cast<float*>(mean),
                                                  const_cast<float*>(rstd), shape, 0.f);
}

cudaError_t LaunchRmsNormApply(cudaStream_t stream, DType dtype, const void* x, const float* rstd,
                               const void* scale, void* y, const NormShape& shape) {
  return Dispatch<Kind::kRmsNorm, Mode::kApply>(stream, dtype, x, scale, nullptr, y, nullptr,
                                                const_cast<float*>(rstd), shape, 0.f);
}

}  // namespace jk
