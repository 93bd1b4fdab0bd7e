// Softmax launchers: the one dtype dispatch, then the tier chosen by the shape.
//
// Last axis (inner == 1), by row length n:
//   kWarpRowsRegisters   n <= 1024: kWidth in {1..32} lanes per row (several rows per warp for short
//                        rows; unmasked rows of 4-32 packs: 2 packs per lane, see LanePacks), the row in
//                        registers, shuffle reductions; log / softmax compiled apart (instruction-bound
//                        when L2-resident).
//   kBlockRowsRegisters  a CTA of <= 512 threads per row, the row in registers, one DRAM read: 64 bytes
//                        per thread at 16-byte packs (16 float32 / 32 16-bit elements: n <= 4096 / 16384),
//                        128 bytes for unmasked float32 rows of 4096 < n <= 16384 (F32BlockElems) and
//                        unmasked 16-bit rows of 16384 < n <= 32768 (HalfWideRows: per-thread (max, sum)
//                        pairs merged once, StatsChoice), 16 elements
//                        otherwise. 16-bit rows stay packed in registers (BlockRowsPackedKernel,
//                        kBlockRowsPackedRegisters); see HalfBlock.
//                        With JK_SOFTMAX_MAX_CLUSTER > 1 (sm_90+), rows up to 8x longer spread over a
//                        thread-block cluster of CTAs of JK_SOFTMAX_CTA_THREADS (256) that exchange the
//                        statistics through distributed shared memory.
//   kClusterRowsHybrid   unmasked float32 16-byte rows past the block tier (n > 16384, up to 8 x 32768) held
//                        partly in registers, partly in shared memory filled by per-thread cp.async
//                        (softmax_cluster.cuh); see LaunchHybridRows.
//   kClusterRowsRegisters  unmasked 16-byte rows past the block tier (16-bit n > 32768; float32 under the knobs; up
//                        to 8x longer): the row in the registers of a thread-block cluster (softmax_cluster.cuh),
//                        one read, a persistent grid; see ClusterRowsChoice.
//   kBlockRowsTwoPass    longer rows (and masked ones past the block tier): a block per row, an online max/sum
//                        pass, then a second read (mostly from L2) that writes.
//   kRingRows            (lab knob JK_SOFTMAX_LONG = "ring C U L" / "off"; the default for float32 n > 16384
//                        and 16-bit n > 32768 until session 8, now behind the cluster tier) unmasked 16-byte
//                        rows read from DRAM once through a shared-memory ring fed by bulk copies
//                        (softmax_long.cuh, common/long_rows.cuh).
// Other axes (inner > 1): kColumnsSplit for unmasked axes of n > 4096 with the lowering's workspace (chunks across
// CTAs, their (max, sum) in the workspace, a merge, an apply pass; softmax_split.cuh); kColumnsTileRegisters for
// the other unmasked calls (16-byte packs of inner columns, the
// column tile held in registers or a cluster's, one read; softmax_columns.cuh; configuration by n:
// tile::DefaultConfig); masked calls, misaligned or narrow columns, axes past 8 x 4096 rows, statistics-only
// and apply: kColumns, a strided kernel (online pass + write pass).
// 16-byte accesses when n and the pointers allow (and the mask is contiguous along the axis with aligned
// rows); the same kernels with kVec = 1 otherwise.
//
// Measured on an H200 (float32, before the block tiers' stores were vectorised for 16-bit types): CTAs of
// 128-256 threads x 16 elements ran at 4.0-4.2 TB/s (n = 2048, 4096); a 512-thread CTA (2 per SM) at 3.3
// (n = 8192); clusters of 2-8 CTAs at 2.0-2.3 (n = 8192-65536); the two-pass tier at 2.7-3.1 (n = 32768,
// 65536). Hence no clusters by default.
// 16-bit types at 16 elements (32 bytes) per thread held only 46-74% of the copy ceiling from n = 2048 on
// (the kernels sat at the 64-register cap: 1024 threads, 32 KB in flight per SM), where float32 rows of
// the same bytes ran at 89-98%. Measured on an H200, 49152 rows, n = 2048..16384, bfloat16 and float16,
// softmax and log_softmax (bench/lab/softmax_half_lab.py, bench/lab/softmax_half_lab_h200.txt):
//   floats16 (before) 1989-3185 GB/s  0.58-0.92x of jnp
//   floats32          3444-4171 GB/s  0.96-1.20x
//   packed32          4113-4229 GB/s  1.05-1.37x   <- default: 96-98% of the 4299 GB/s copy ceiling
//   bulk              3260-3762 GB/s  0.83-1.21x
// Rows of <= 256 16-bit columns: 2 rows per lane instead of 4, 0.74-0.94x -> 0.82-1.06x of jnp (L2-warm).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "common/launch.h"
#include "softmax/softmax_cluster.cuh"
#include "softmax/softmax_columns.cuh"
#include "softmax/softmax_split.cuh"
#include "softmax/softmax_kernels.cuh"
#include "softmax/softmax_launch.h"
#include "softmax/softmax_long.cuh"
#include "softmax/softmax_stats_apply.cuh"
#include "softmax/softmax_window.cuh"

namespace jk {
namespace {

using softmax::ColumnsMode;

constexpr int kBlockElems = 16;      // elements per thread in the block tier (float32, or kVec = 1)
constexpr int kBlockElemsHalf = 32;  // 16-bit types at 16-byte packs: 64 bytes per thread like float32
constexpr int kMaxCluster = 8;   // the portable cluster size limit

// Lab knobs, read once per process: the block tier's CTA width when clustered, its largest cluster
// (1: no clusters), and the longest rows of the warp and block tiers.
int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::max(1, std::atoi(v)) : fallback;
}
int BlockThreads() {
  static const int v = std::min(softmax::kBlockRowsMaxThreads, EnvInt("JK_SOFTMAX_CTA_THREADS", 256));
  return v;
}
int ClusterLimit() {
  static const int v = std::min(kMaxCluster, EnvInt("JK_SOFTMAX_MAX_CLUSTER", 1));
  return v;
}
// Longest row of the warp-per-row tier (at most 1024: 32 lanes x 32 elements in registers).
int WarpRowsMax() {
  static const int v = std::min(1024, EnvInt("JK_SOFTMAX_WARP_MAX", 1024));
  return v;
}
// Rows per lane of the warp tier for unmasked 16-bit rows of one pack per lane (<= 256 columns); 2 was
// measured ahead of 4 and 1 at 32 and 128 columns.
int ShortRows() {
  static const int v = EnvInt("JK_SOFTMAX_SHORT_ROWS", 2);
  return v;
}
// Elements per thread of the block tier for unmasked float32 rows of 16-byte packs: 32 (CTAs of n / 32
// threads, 128 bytes in flight per thread) past 4096 columns, 16 up to it (lab knob JK_SOFTMAX_F32_ELEMS =
// 16 or 32 forces one). Measured on an H200, 49152 rows (bench/lab/softmax_short_lab_h200.txt), softmax /
// log_softmax vs jnp: 16 elements 1.05/1.04x (n = 2048), 1.08/1.07x (4096), 0.99/0.97x (8192),
// 1.60/1.45x (16384, two passes); 32 elements 1.03/1.02x, 1.04/1.04x, 1.06/1.05x, 1.74/1.57x (88 -> 95%
// of the copy ceiling at 8192 and 16384).
int F32BlockElems(int64_t n) {
  static const int v = EnvInt("JK_SOFTMAX_F32_ELEMS", 0);
  if (v == 16 || v == 32) return v;
  return n > 4096 ? 32 : 16;
}
// Unmasked 16-bit rows too long for 32 elements per thread (16384 < n <= 32768): 64 packed elements per
// thread (two CTAs of 512 per SM, one read) instead of two passes. Measured on an H200 at 49152 x 32768:
// 56-60% -> 89-94% of the copy ceiling, 1.33-1.64x -> 2.12-2.56x of jnp. Lab knob JK_SOFTMAX_HALF_WIDE=0:
// two passes.
bool HalfWideRows() {
  static const bool v = [] {
    const char* e = std::getenv("JK_SOFTMAX_HALF_WIDE");
    return e == nullptr || std::atoi(e) != 0;
  }();
  return v;
}
// Longest row of the block tier; longer rows go to the two-pass tier (or to clusters when enabled).
int BlockRowsMax() {
  static const int v = EnvInt("JK_SOFTMAX_BLOCK_MAX", 1 << 30);
  return v;
}

// How the block tier holds 16-bit rows (lab knob JK_SOFTMAX_HALF_BLOCK, read once per process):
//   floats16  16 elements per thread widened to float (the layout before issue 4; n > 8192 two-pass)
//   floats32  32 elements per thread widened to float (BlockRowsKernel, 64-register cap, 2 CTAs of 512)
//   packed32  (default) 32 elements per thread kept packed (BlockRowsPackedKernel, 40-register cap, 3 CTAs
//             of 512; softmax pays a second exp per element, log_softmax nothing); fastest measured
//   bulk      packed32's registers, rows loaded by the bulk copy engine into shared memory, 2-4 rows in
//             flight per persistent CTA (BulkRowsKernel; sm_90, unmasked rows; others as packed32);
//             measured slower than packed32 everywhere
enum class HalfBlock { kFloats16, kFloats32, kPacked32, kBulk };
HalfBlock HalfBlockLayout() {
  static const HalfBlock v = [] {
    const char* e = std::getenv("JK_SOFTMAX_HALF_BLOCK");
    const std::string_view s = e ? e : "";
    if (s == "floats16") return HalfBlock::kFloats16;
    if (s == "floats32") return HalfBlock::kFloats32;
    if (s == "bulk") return HalfBlock::kBulk;
    return HalfBlock::kPacked32;
  }();
  return v;
}

// Thread-block clusters (and bulk copies) need sm_90 code: see RunsSm90Code.
bool HasClusters() { return RunsSm90Code(); }

// 64-bit: the columns tier passes `inner`, which can exceed 2^30 (softmax over axis 0 of a (2, 24576, 65536)
// array); an int doubling past 2^30 overflowed to 0 and this loop never ended (a host-side hang).
int64_t NextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

template <typename T>
struct RowArgs {
  cudaStream_t stream;
  const T* x;
  T* y;
  int64_t rows, n;
  const MaskIndex* mask;
  bool log;
};

// One pack per lane per row (rows of <= 32 packs): kRows = 4 rows per lane by default, for 64 bytes in
// flight per lane and fewer, longer-lived blocks (measured 0.8x of XLA at 128 bfloat16 columns with one
// row per lane). Unmasked 16-bit rows take ShortRows() (2) instead.
template <typename T, int kVec, int kPacks, int kWidth, bool kMask, int kRows = (kPacks == 1 ? 4 : 1)>
cudaError_t LaunchWarpRows(const RowArgs<T>& a) {
  constexpr int64_t kRowsPerBlock = (softmax::kWarpRowsBlock / kWidth) * kRows;
  const int64_t grid = std::min<int64_t>(CeilDiv(a.rows, kRowsPerBlock), int64_t(1) << 30);
  auto kernel = a.log ? softmax::WarpRowsKernel<T, kVec, kPacks, kWidth, kRows, kMask, true>
                      : softmax::WarpRowsKernel<T, kVec, kPacks, kWidth, kRows, kMask, false>;
  kernel<<<static_cast<unsigned>(grid), softmax::kWarpRowsBlock, 0, a.stream>>>(a.x, a.y, a.rows,
                                                                                static_cast<int>(a.n), *a.mask);
  return LastLaunchError();
}

template <typename T, int kVec, int kWidth, bool kMask>
cudaError_t LaunchOnePackRows(const RowArgs<T>& a) {
  if constexpr (sizeof(T) == 2 && kVec > 1 && !kMask) {
    switch (ShortRows()) {
      case 1: return LaunchWarpRows<T, kVec, 1, kWidth, kMask, 1>(a);
      case 2: return LaunchWarpRows<T, kVec, 1, kWidth, kMask, 2>(a);
      default: break;
    }
  }
  return LaunchWarpRows<T, kVec, 1, kWidth, kMask>(a);
}

// Rows of <= 32 packs held as kPacks > 1 packs per lane by `width` lanes (fewer shuffle rounds and less
// per-row work per element than one pack per lane), kRows rows per lane.
template <typename T, int kVec, int kPacks, int kRows, bool kMask>
cudaError_t LaunchLaneGroupRows(const RowArgs<T>& a, int64_t width) {
  switch (width) {
    case 1: return LaunchWarpRows<T, kVec, kPacks, 1, kMask, kRows>(a);
    case 2: return LaunchWarpRows<T, kVec, kPacks, 2, kMask, kRows>(a);
    case 4: return LaunchWarpRows<T, kVec, kPacks, 4, kMask, kRows>(a);
    case 8: return LaunchWarpRows<T, kVec, kPacks, 8, kMask, kRows>(a);
    default:
      if constexpr (kPacks * 16 <= 32) return LaunchWarpRows<T, kVec, kPacks, 16, kMask, kRows>(a);
      return cudaErrorInvalidValue;  // unreachable: width = packs / kPacks <= 32 / kPacks
  }
}

// Packs per lane for unmasked rows of `packs` (a power of two, <= 32) 16-byte packs: 2 from 4 packs on
// (lab knob JK_SOFTMAX_LANE_PACKS = 1, 2 or 4 overrides; JK_SOFTMAX_LANE_ROWS = 1 or 2 rows per lane
// with more than one pack). Measured on an H200, 49152 rows, L2-resident, vs jnp (softmax / log_softmax):
//                  1 pack x 2 rows (16-bit) / x 4 (f32)   2 packs x 1 row   2 x 2        4 x 1
//   bf16  32 cols  1.16 / 1.11                            1.21 / 1.18       0.93 / 0.86  0.67 / 0.66
//   f16   32 cols  1.04 / 1.00                            1.09 / 1.03       0.84 / 0.79  0.59 / 0.59
//   f32   32 cols  1.11 / 1.08                            1.25 / 1.20       1.24 / 1.18  0.85 / 0.82
//   bf16 128 cols  0.97 / 0.93                            1.04 / 1.00       0.90 / 0.83  0.98 / 0.94
//   f16  128 cols  0.94 / 0.93                            1.06 / 1.04       0.88 / 0.84  0.93 / 0.91
//   f32  128 cols  0.98 / 1.00                            1.01 / 1.03       1.01 / 1.04  1.01 / 1.03
// (the first column already with the kLog kernels; before them, results.md: 0.92 / 0.82 at bf16 128).
// Rows of 1-2 packs (<= 16 16-bit / 8 float32 columns) were not measured and keep one pack per lane.
int LanePacks(int64_t packs) {
  static const int v = EnvInt("JK_SOFTMAX_LANE_PACKS", 0);
  const int lp = v == 1 || v == 2 || v == 4 ? v : (packs >= 4 ? 2 : 1);
  return packs >= lp ? lp : 1;
}
int LaneRows() {
  static const int v = EnvInt("JK_SOFTMAX_LANE_ROWS", 1);
  return v == 2 ? 2 : 1;
}

// Smallest per-lane pack count (and, for one pack, the smallest lane group) that holds the row.
template <typename T, int kVec, bool kMask, int kPacks = 1>
cudaError_t DispatchWarpRows(const RowArgs<T>& a) {
  if constexpr (kPacks == 1) {
    const int64_t packs = CeilDiv(a.n, kVec);
    if (packs <= 32) {
      const int64_t p2 = NextPow2(packs);
      if constexpr (kVec > 1 && !kMask) {
        switch (LanePacks(p2)) {
          case 2:
            return LaneRows() == 2 ? LaunchLaneGroupRows<T, kVec, 2, 2, kMask>(a, p2 / 2)
                                   : LaunchLaneGroupRows<T, kVec, 2, 1, kMask>(a, p2 / 2);
          case 4: return LaunchLaneGroupRows<T, kVec, 4, 1, kMask>(a, p2 / 4);
          default: break;
        }
      }
      switch (p2) {
        case 1: return LaunchOnePackRows<T, kVec, 1, kMask>(a);
        case 2: return LaunchOnePackRows<T, kVec, 2, kMask>(a);
        case 4: return LaunchOnePackRows<T, kVec, 4, kMask>(a);
        case 8: return LaunchOnePackRows<T, kVec, 8, kMask>(a);
        case 16: return LaunchOnePackRows<T, kVec, 16, kMask>(a);
        default: return LaunchOnePackRows<T, kVec, 32, kMask>(a);
      }
    }
  }
  if constexpr (kPacks * kVec > 32) {
    return cudaErrorInvalidValue;  // unreachable: the caller sends n <= 1024 only
  } else {
    if (a.n <= 32 * kPacks * kVec) return LaunchWarpRows<T, kVec, kPacks, 32, kMask>(a);
    return DispatchWarpRows<T, kVec, kMask, kPacks * 2>(a);
  }
}

// CTA width and cluster size for a row of n at `elems` per thread: one CTA of up to 512 threads; with
// clusters enabled, C CTAs of up to the target width instead of CTAs wider than it.
struct BlockShape {
  int ctas = 0, threads = 0;  // ctas == 0: the row does not fit
};
BlockShape PickBlockShape(int64_t n, int elems) {
  const int64_t threads_needed = CeilDiv(n, elems);
  const int limit = HasClusters() ? ClusterLimit() : 1;
  int c = 1;
  while (c < limit && threads_needed > c * int64_t(BlockThreads())) c *= 2;
  const int64_t threads = std::max<int64_t>(32, CeilDiv(CeilDiv(threads_needed, c), 32) * 32);
  if (threads > softmax::kBlockRowsMaxThreads) return {};
  return {c, static_cast<int>(threads)};
}

template <typename T, int kVec, int kElems, bool kMask>
cudaError_t LaunchBlockRows(const RowArgs<T>& a, BlockShape shape) {
  auto kernel = softmax::BlockRowsKernel<T, kVec, kElems / kVec, kMask>;
  const int64_t clusters = std::min<int64_t>(a.rows, int64_t(1) << 24);
  ClusterLaunch launch(dim3(static_cast<unsigned>(clusters * shape.ctas)), dim3(shape.threads), a.stream, shape.ctas);
  cudaError_t e = cudaLaunchKernelEx(&launch.cfg, kernel, a.x, a.y, a.rows, a.n, *a.mask, a.log);
  return e != cudaSuccess ? e : LastLaunchError();
}

// How the packed 16-bit kernels and the cluster tiers get a row's statistics (softmax::PackedStats); `fallback`
// where the lab knob JK_SOFTMAX_STATS = two | pair | keep | keepfma is unset. The knob is re-read at every launch (XLA
// command buffers off) so one process can time each; the cluster tiers always merge pairs, so for them only
// keep (exponentials kept) differs. Measured on an H200 (bench/lab/s11_h200.md, softmax / log_softmax, % of the
// copy ceiling):
//   16-bit 49152 x 32768 (block tier, 64 packed elements)  two 90 / 90   pair 99 / 100   keep 98-99 / -
//   16-bit 49152 x 16384 (block tier, 32 packed elements)  two 100       pair 89         keep 95
//   16-bit 24576 x 65536 (cluster tier)                    pair 87-88 / 88-91            keep 90-91 / -
//   float32 24576 x 65536, 49152 x 32768 (cluster tier)    pair 89, 92                   keep 88, 91
// (at 64 elements the two reductions' instantiation spills 24-32 bytes, the pairs' none). Hence pairs for the
// 64-element block kernel, keep for the 16-bit cluster kernel's softmax, the rest as before. keepfma (session 14):
// keep with bfloat16's scaling on the packed pairs, the cluster kernel's default for bfloat16 (bench/lab/s14_h200.md
// call 1: 24576 x 65536 1.679 -> 1.646 ms); elsewhere it means keep.
softmax::PackedStats StatsChoice(softmax::PackedStats fallback) {
  const char* e = std::getenv("JK_SOFTMAX_STATS");
  const std::string_view v = e ? e : "";
  if (v == "two") return softmax::kStatsTwoReductions;
  if (v == "pair") return softmax::kStatsPair;
  if (v == "keep") return softmax::kStatsKeepExp;
  if (v == "keepfma") return softmax::kStatsKeepExpFma;
  return fallback;
}

template <typename T, bool kMask, int kElems = kBlockElemsHalf, int kMinBlocks = 3>
cudaError_t LaunchBlockRowsPacked(const RowArgs<T>& a, BlockShape shape) {
  const int64_t grid = std::min<int64_t>(a.rows, int64_t(1) << 24);
  constexpr int kPacks = kElems / kVec16<T>;
  auto kernel = softmax::BlockRowsPackedKernel<T, kPacks, kMask, kMinBlocks, softmax::kStatsTwoReductions>;
  softmax::PackedStats stats =
      StatsChoice(kElems == 2 * kBlockElemsHalf ? softmax::kStatsPair : softmax::kStatsTwoReductions);
  if (stats == softmax::kStatsKeepExpFma) stats = softmax::kStatsKeepExp;  // the cluster tier's lab form only
  switch (a.log && stats == softmax::kStatsKeepExp ? softmax::kStatsPair : stats) {
    case softmax::kStatsPair:
      kernel = softmax::BlockRowsPackedKernel<T, kPacks, kMask, kMinBlocks, softmax::kStatsPair>;
      break;
    case softmax::kStatsKeepExp:
      kernel = softmax::BlockRowsPackedKernel<T, kPacks, kMask, kMinBlocks, softmax::kStatsKeepExp>;
      break;
    default: break;
  }
  kernel<<<static_cast<unsigned>(grid), shape.threads, 0, a.stream>>>(a.x, a.y, a.rows, a.n, *a.mask, a.log);
  return LastLaunchError();
}

// Shared memory past 48 KB needs a per-kernel opt-in; set once per device (a host-side attribute, legal
// under stream capture; every writer stores the same value).
template <auto kKernel>
cudaError_t AllowDynamicSmem(int bytes) {
  constexpr int kMaxDevices = 64;
  static int done[kMaxDevices] = {0};
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  if (dev >= 0 && dev < kMaxDevices && done[dev] >= bytes) return cudaSuccess;
  e = cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (e == cudaSuccess && dev >= 0 && dev < kMaxDevices) done[dev] = bytes;
  return e;
}

// Persistent CTAs, as many per SM as fit: each keeps `stages` rows of shared memory (~48 KB, 2 to 4
// rows), so 1-3 rows per CTA are in flight while it reduces and writes another.
template <typename T>
cudaError_t LaunchBulkRows(const RowArgs<T>& a, BlockShape shape) {
  constexpr auto kKernel = softmax::BulkRowsKernel<T, kBlockElemsHalf / kVec16<T>>;
  constexpr int kStagesBytes = 48 << 10;
  const int64_t stage_bytes = CeilDiv(a.n * int64_t(sizeof(T)), 128) * 128;
  const int stages =
      static_cast<int>(std::clamp<int64_t>(kStagesBytes / stage_bytes, 2, softmax::kBulkMaxStages));
  const int smem = static_cast<int>(stages * stage_bytes);
  cudaError_t e = AllowDynamicSmem<kKernel>(2 * kStagesBytes);
  if (e != cudaSuccess) return e;
  int per_sm = 0;
  e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kKernel, shape.threads, smem);
  if (e != cudaSuccess) return e;
  const int64_t grid = std::min<int64_t>(a.rows, int64_t(std::max(per_sm, 1)) * NumSMs());
  kKernel<<<static_cast<unsigned>(grid), shape.threads, smem, a.stream>>>(
      a.x, a.y, a.rows, a.n, a.log, stages, static_cast<uint32_t>(stage_bytes));
  return LastLaunchError();
}

template <typename T, ColumnsMode kMode>
cudaError_t LaunchColumns(cudaStream_t stream, const T* x, T* y, float* max_out, float* sum_out,
                          const float* max_in, const float* sum_in, int64_t outer, int64_t n, int64_t inner,
                          const MaskIndex& mask, bool log, const Workspace& ws = {}) {
  // Unmasked softmax: long axes split over CTAs where the lowering gave a workspace (softmax_split.cuh); else the
  // column tile held in registers (softmax_columns.cuh) where its configuration applies (tile::DefaultConfig).
  if constexpr (kMode == ColumnsMode::kSoftmax) {
    if (mask.data == nullptr) {
      cudaError_t e = tile::SplitEnabled() ? softmax::LaunchColumnsSplit<T>(stream, x, y, outer, n, inner, log, ws)
                                           : cudaErrorNotSupported;
      if (e != cudaErrorNotSupported) return e;
      e = softmax::LaunchColumnsTile<T>(stream, x, y, outer, n, inner, log, HasClusters());
      if (e != cudaErrorNotSupported) return e;
    }
  }
  const int bx = static_cast<int>(std::min<int64_t>(32, NextPow2(inner)));
  const dim3 block(bx, softmax::kColumnsBlock / bx);
  const int64_t tiles = outer * CeilDiv(inner, bx);
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t(1) << 30));
  if (mask.data != nullptr) {
    softmax::ColumnsKernel<T, true, kMode>
        <<<grid, block, 0, stream>>>(x, y, max_out, sum_out, max_in, sum_in, outer, n, inner, mask, log);
  } else {
    softmax::ColumnsKernel<T, false, kMode>
        <<<grid, block, 0, stream>>>(x, y, max_out, sum_out, max_in, sum_in, outer, n, inner, mask, log);
  }
  return LastLaunchError();
}

// Persistent, one or two CTAs of 512 per SM: as many rows in flight as keep their bytes under ~24 MB, so
// the second read hits L2 (measured with two per SM: 63% of the copy ceiling at 256 KB rows, 71% at 128 KB,
// consistent with the re-read missing L2 once ~34-67 MB of rows are in flight).
template <typename T, int kVec, bool kMask>
cudaError_t LaunchTwoPassRows(const RowArgs<T>& a) {
  constexpr int64_t kL2Budget = int64_t(24) << 20;
  const int64_t row_bytes = a.n * int64_t(sizeof(T));
  const int64_t per_sm = std::clamp<int64_t>(kL2Budget / (int64_t(NumSMs()) * row_bytes), 1, 2);
  const int64_t grid = std::min<int64_t>(a.rows, per_sm * NumSMs());
  softmax::TwoPassRowsKernel<T, kVec, kMask>
      <<<static_cast<unsigned>(grid), softmax::kTwoPassBlock, 0, a.stream>>>(a.x, a.y, a.rows, a.n, *a.mask, a.log);
  return LastLaunchError();
}

// kClusterRowsRegisters (softmax_cluster.cuh): unmasked rows longer than one CTA's registers, spread over a
// cluster of C CTAs of 512 threads x `elems` elements, read once: float32 rows of 16384 < n <= 131072 at 32
// widened elements per thread (C = 2..8), 16-bit rows of 32768 < n <= 262144 at 64 packed elements (C =
// 2..8); a persistent grid of as many clusters as fit at once. Measured on an H200 (bench/lab/s8_h200.md,
// softmax / log_softmax; two passes; the ring tier, the default before, from softmax_long.cuh's table):
//   float32 49152 x 32768   two passes 74%, ring 85-89% -> 88-89% of the copy ceiling (1.74x jnp)
//   float32 24576 x 65536   two passes 65%, ring 72-73% -> 80-82%                    (1.57-1.60x)
//   16-bit  24576 x 65536   two passes 63-69%, ring 70-75% -> 80-85%                 (1.88-2.30x)
// and since session 10 (bench/lab/s10_h200.md) the CTAs' (max, sum) pairs travel by ClusterExchange
// (common/cluster_exchange.cuh) instead of a cluster barrier per row: float32 32768 88-89% -> 92%, float32
// 65536 81-82% -> 89%, 16-bit 65536 81-83% -> 87-90%. CTAs of 256 threads tied or lost. Since session 11
// 16-bit softmax keeps its exponentials in registers (StatsChoice): 87-88% -> 90-91% at 65536.
// (one cluster per row instead of a persistent grid: 75-85%; 16 widened elements per thread, clusters twice
// as wide: 41-44%). Masked rows keep the other tiers (float32 at 32 elements spills under the mask).
// Lab knob JK_SOFTMAX_CLUSTER_ROWS = "E R [T]" (E = 16, 32 or 64 (16-bit only) elements per thread; R resident
// CTAs per SM for a persistent grid, 0: one cluster per row, -1: as many clusters as the occupancy
// calculator says fit at once; T threads per CTA, default 512) forces the tier past one CTA's 512 x 32 elements, masked rows included;
// "off" disables it. Re-read at every launch (XLA command buffers off) so one process can time each setting.
// The cluster tier comes before the ring tier, which runs only where JK_SOFTMAX_LONG is set (and this
// knob is not).
struct ClusterRowsShape {
  int ctas = 0, elems = 0, resident = 0;  // ctas == 0: not this tier
  int threads = 0;                        // per CTA: the row's packs over the cluster, in whole warps (RowSpanFor)
};
template <typename T, bool kMask>
ClusterRowsShape ClusterRowsChoice(int64_t n) {
  if (!HasClusters()) return {};
  int e = sizeof(T) == 2 ? 64 : 32, r = -1, t = softmax::kBlockRowsMaxThreads;
  int64_t from = sizeof(T) == 2 ? int64_t(t) * 64 : int64_t(t) * 32;  // longer than the block tiers' rows
  if (const char* env = std::getenv("JK_SOFTMAX_CLUSTER_ROWS")) {
    const int got = std::sscanf(env, "%d %d %d", &e, &r, &t);
    if (got < 2 || !(e == 16 || e == 32 || (e == 64 && sizeof(T) == 2)) || t < 32 || t > 512 || t % 32 != 0) return {};
    from = int64_t(softmax::kBlockRowsMaxThreads) * 32;
  } else if (kMask || std::getenv("JK_SOFTMAX_LONG") != nullptr) {
    return {};  // masked rows; or the ring tier's lab knob set, which then decides (SoftmaxRingChoice)
  }
  if (n <= from) return {};
  const RowSpan span = RowSpanFor(n, e, t, kMaxCluster);
  if (span.ctas == 0) return {};
  return {span.ctas, e, r, span.threads};
}

// 16-bit rows at 64 elements per thread stay packed; the others are widened to float32. kStats: kStatsPair, or
// softmax keeping its exponentials (StatsChoice; the widened kernel has one form of that). kLog: log_softmax, a
// template parameter of the packed kernel only.
template <typename T, int kVec, int kElems, bool kMask, int kStats, bool kLog = false>
auto ClusterRowsKernelFor() {
  if constexpr (kElems == 64) {
    return softmax::ClusterRowsPackedKernel<T, kElems / kVec, kMask, kStats, kLog>;
  } else {
    return softmax::ClusterRowsKernel<T, kVec, kElems / kVec, kMask, softmax::KeepsExp(kStats)>;
  }
}

template <typename T, int kVec, int kElems, bool kMask>
cudaError_t LaunchClusterRowsImpl(const RowArgs<T>& a, ClusterRowsShape shape) {
  auto kernel = a.log ? ClusterRowsKernelFor<T, kVec, kElems, kMask, softmax::kStatsPair, true>()
                      : ClusterRowsKernelFor<T, kVec, kElems, kMask, softmax::kStatsPair>();
  if constexpr (!kMask) {
    // bfloat16 at 64 packed elements scales on the pairs (session 14, bench/lab/s14_h200.md: 24576 x 65536
    // 1.679 -> 1.646 ms, 90 -> 92% of copy); "keep" restores the float32 scaling.
    constexpr bool kPackedBf16 = kElems == 64 && std::is_same_v<T, __nv_bfloat16>;
    const auto fallback = kPackedBf16 ? softmax::kStatsKeepExpFma
                          : kElems == 64 ? softmax::kStatsKeepExp
                                         : softmax::kStatsPair;
    const softmax::PackedStats stats = a.log ? softmax::kStatsPair : StatsChoice(fallback);
    if (softmax::KeepsExp(stats)) kernel = ClusterRowsKernelFor<T, kVec, kElems, kMask, softmax::kStatsKeepExp>();
    if constexpr (kPackedBf16) {
      if (stats == softmax::kStatsKeepExpFma)
        kernel = ClusterRowsKernelFor<T, kVec, kElems, kMask, softmax::kStatsKeepExpFma>();
    }
  }
  return LaunchClusterGrid(kernel, shape.ctas, shape.threads, 0, a.rows, shape.resident, a.stream, a.x, a.y, a.rows,
                           a.n, *a.mask, a.log, ClusterExchangeOn() ? 1 : 0);
}

template <typename T, int kVec, bool kMask>
cudaError_t LaunchClusterRows(const RowArgs<T>& a, ClusterRowsShape shape) {
  if constexpr (sizeof(T) == 2) {
    if (shape.elems == 64) return LaunchClusterRowsImpl<T, kVec, 64, kMask>(a, shape);
  }
  if (shape.elems == 32) return LaunchClusterRowsImpl<T, kVec, 32, kMask>(a, shape);
  return LaunchClusterRowsImpl<T, kVec, 16, kMask>(a, shape);
}

// kClusterRowsHybrid (softmax_cluster.cuh): unmasked float32 rows of 16-byte packs past the block tier (n > 16384)
// held partly in registers, partly in shared memory: 6 packs per thread in registers and 10 staged by cp.async
// (24 + 40 elements: one CTA of 512 up to 32768, clusters of 2-8 past it), a persistent grid. Measured on an H200
// (bench/lab/s12_h200.md call 1, softmax / log_softmax, % of the copy ceiling; "cluster" = kClusterRowsRegisters,
// the default before, 32 elements per thread in registers):
//   float32 24576 x 65536   cluster (of 4) 89 / 89   hybrid (cluster of 2) 92 / 93 (1.82x jnp)
//   float32 49152 x 32768   cluster (of 2) 92 / 92   hybrid (one CTA)      92 / 92
// 8 + 8 packs spilled 24 bytes and lost (84-85%); 16-bit rows widened on it (4 + 12, 3 + 13 packs) lost to the
// packed cluster kernel (82-88% against 90-91%) and keep it. Lab knob JK_SOFTMAX_HYBRID (re-read per launch):
// 0 = off (the cluster tier), 3 = 4 + 12 packs; unset or 2 = the default. JK_SOFTMAX_CLUSTER_ROWS or
// JK_SOFTMAX_LONG set: off (those knobs force their tiers).
int HybridRowsChoice() {
  if (std::getenv("JK_SOFTMAX_CLUSTER_ROWS") != nullptr || std::getenv("JK_SOFTMAX_LONG") != nullptr) return 0;
  const char* e = std::getenv("JK_SOFTMAX_HYBRID");
  return e == nullptr ? 2 : std::atoi(e);
}
template <typename T, int kPacks, int kStaged>
cudaError_t LaunchHybridRowsImpl(const RowArgs<T>& a) {
  constexpr int kVec = kVec16<T>;
  const RowSpan span = RowSpanFor(a.n, (kPacks + kStaged) * kVec, softmax::kBlockRowsMaxThreads, kMaxCluster);
  if (span.ctas == 0) return cudaErrorNotSupported;
  const size_t smem = size_t(kStaged) * span.threads * 16;
  return LaunchClusterGrid(softmax::ClusterRowsHybridKernel<T, kVec, kPacks, kStaged>, span.ctas, span.threads, smem,
                           a.rows, -1, a.stream, a.x, a.y, a.rows, a.n, *a.mask, a.log);
}
template <typename T>
cudaError_t LaunchHybridRows(const RowArgs<T>& a, int choice) {
  static_assert(sizeof(T) == 4, "float32 only: the 16-bit forms lost (above)");
  if (choice == 3) return LaunchHybridRowsImpl<T, 4, 12>(a);
  if (choice == 2) return LaunchHybridRowsImpl<T, 6, 10>(a);
  return cudaErrorNotSupported;
}

template <typename T, int kVec, bool kMask>
cudaError_t LaunchRows(const RowArgs<T>& a) {
  if (a.n <= WarpRowsMax()) return DispatchWarpRows<T, kVec, kMask>(a);
  if constexpr (kVec > 1 && !kMask && sizeof(T) == 4) {
    if (HasClusters() && a.n > int64_t(softmax::kBlockRowsMaxThreads) * 32) {
      const cudaError_t e = LaunchHybridRows<T>(a, HybridRowsChoice());
      if (e != cudaErrorNotSupported) return e;
    }
  }
  if constexpr (kVec > 1) {
    const ClusterRowsShape cs = ClusterRowsChoice<T, kMask>(a.n);
    if (cs.ctas > 1) return LaunchClusterRows<T, kVec, kMask>(a, cs);
  }
  if constexpr (kVec > 1 && !kMask) {
    // Long rows read once through a shared-memory ring (softmax_long.cuh), where chosen.
    const long_rows::RingChoice ring = softmax::SoftmaxRingChoice<T>(a.n);
    if (ring.enabled && HasClusters()) {
      const cudaError_t e =
          long_rows::LaunchRing<T>(softmax::RingSoftmaxOp{a.log}, a.x, a.y, a.rows, a.n, ring, a.stream);
      if (e != cudaErrorNotSupported) return e;
    }
  }
  const bool fits = a.n <= BlockRowsMax();
  if constexpr (sizeof(T) == 2 && kVec > 1) {
    const HalfBlock layout = HalfBlockLayout();
    if (layout != HalfBlock::kFloats16) {
      const BlockShape shape = fits ? PickBlockShape(a.n, kBlockElemsHalf) : BlockShape{};
      if (shape.ctas == 1 && layout == HalfBlock::kBulk && !kMask && HasClusters())
        return LaunchBulkRows<T>(a, shape);  // HasClusters: sm_90, as the bulk copy
      if (shape.ctas == 1 && layout >= HalfBlock::kPacked32) return LaunchBlockRowsPacked<T, kMask>(a, shape);
      if constexpr (!kMask) {
        if (shape.ctas == 0 && fits && layout == HalfBlock::kPacked32 && HalfWideRows()) {
          const BlockShape wide = PickBlockShape(a.n, 2 * kBlockElemsHalf);
          if (wide.ctas == 1) return LaunchBlockRowsPacked<T, kMask, 2 * kBlockElemsHalf, 2>(a, wide);
        }
      }
      if (shape.ctas > 0) return LaunchBlockRows<T, kVec, kBlockElemsHalf, kMask>(a, shape);
      return LaunchTwoPassRows<T, kVec, kMask>(a);
    }
  }
  if constexpr (sizeof(T) == 4 && kVec > 1 && !kMask) {  // masked: 92 bytes of spills at 32
    if (F32BlockElems(a.n) == 32) {
      const BlockShape shape = fits ? PickBlockShape(a.n, 32) : BlockShape{};
      if (shape.ctas == 1) return LaunchBlockRows<T, kVec, 32, kMask>(a, shape);
    }
  }
  const BlockShape shape = fits ? PickBlockShape(a.n, kBlockElems) : BlockShape{};
  if (shape.ctas > 0) return LaunchBlockRows<T, kVec, kBlockElems, kMask>(a, shape);
  return LaunchTwoPassRows<T, kVec, kMask>(a);
}

// 16-byte accesses need n to be a whole number of packs, 16-byte aligned x and y, and (with a mask) a mask
// contiguous along the axis whose row offsets and base are multiples of the pack.
template <typename T>
bool CanVectorise(const RowArgs<T>& a) {
  constexpr int kVec = kVec16<T>;
  if (a.n % kVec != 0 || !IsAligned(a.x, 16) || !IsAligned(a.y, 16)) return false;
  const MaskIndex& m = *a.mask;
  return m.data == nullptr ||
         (m.axis_stride == 1 && m.outer.StridesMultipleOf(kVec) && IsAligned(m.data, kVec));
}

// CTAs of WindowRowsRegsKernel<T, C> resident per SM at `packs` packs a row (its threads: whole warps of C packs a
// thread), cached per device and warp count (CachedCtasPerSm). 0 where the calculator fails.
template <typename T, int C>
int WindowRegsRowsPerSm(int64_t packs) {
  constexpr int kMaxWarps = softmax::kWindowRegsMaxThreads / 32;
  static int cache[kMaxWarps + 1][kOccupancyCacheDevices] = {};
  const int64_t warps = CeilDiv(CeilDiv(packs, C), 32);
  if (warps < 1 || warps > kMaxWarps) return 0;
  return CachedCtasPerSm(reinterpret_cast<const void*>(softmax::WindowRowsRegsKernel<T, C, false>),
                         static_cast<int>(warps * 32), cache[warps]);
}

// kWindowRows (softmax_window.cuh): unmasked rows of n % kVec != 0 over 16-byte-aligned x and y past 1024 columns.
// The two-pass form (WindowRowsKernel): a warp per row up to 64 packs, else a CTA per row of up to 512 threads. H200,
// one process, CUPTI, 3 rotated rounds (bench/lab/s32_odd_softmax_window_lab_h200.txt, x jnp, softmax / log_softmax
// alike, the kVec = 1 tiers -> this form):
//   float32   1537 0.96-0.97x -> 1.11x   2051 0.86x -> 1.01x   4099 0.77x -> 1.01-1.02x   16381 0.69-0.70x -> 0.87x
//             8192 x 50257 0.64-0.65x -> 1.22x
//   bfloat16  1537 0.60-0.62x -> 0.93-0.94x   2051 0.48-0.50x -> 0.85-0.89x   4099 0.44-0.47x -> 0.84-0.87x
//             16381 0.41-0.43x -> 0.90-0.96x   8192 x 50257 0.62-0.63x -> 1.70-1.76x
// At 97 and 1001 columns the kVec = 1 warp tier stays (97: 1.95-2.34x against 0.86-1.14x here).
// The register-held form (WindowRowsRegsKernel, the default wherever the window fits): the window read once into
// registers, C packs a thread, instead of a second read (from L2 at best) for the outputs. Shapes as the norms'
// window tier (norm_window.cu), by the widest window's packs: a warp per row (4 rows a CTA) up to 128 packs, 2 packs
// a lane up to 64, else 4; a CTA per row past that, C packs a thread by the cost rule below (C = 4, 5 or 6 while
// that takes at most 512 threads, 8 up to 8192 packs and 1024 threads), the threads the packs' share in whole warps.
// Longer rows (float32 50257: 12565 packs) keep the two-pass form. Registers (ptxas, sm_90a, no spills; float32 /
// bfloat16 / float16): a CTA of 8 packs a thread 56 / 62 / 64 under the 1024-thread bound's cap of 64, of 6 56 / 54 /
// 52, of 5 50 / 52 / 48, of 4 32 / 46 / 48; a warp of 4 packs 48 / 48 / 50, of 2 packs 35 / 40 / 40.
// H200, session 33 call 3 (bench/lab/s33_softmax_window_lab_h200.txt, the same method; softmax / log_softmax alike,
// x jnp, two passes -> registers with 4 packs a thread, % of copy; 16-bit rows gained again with the 4-or-8 rule
// below: 1537 1.41-1.54x, 8195 1.18-1.21x):
//   float32   1537 1.10-1.11x -> 1.25-1.26x (97%)   2051 1.00-1.01x -> 1.18-1.19x   4099 1.00-1.01x -> 1.15x (96%)
//             8195 1.02-1.04x -> 1.15-1.17x   16384 x 16381 0.86x -> 1.18x (97%)   8192 x 50257 two passes 1.23x (62%)
//   bfloat16  1537 0.92-0.94x -> 1.21-1.23x   2051 0.85-0.88x -> 1.00-1.04x   4099 0.84-0.87x -> 1.05-1.10x (83-84%)
//             8195 0.87x -> 1.08-1.09x   16381 0.90-0.96x -> 1.21-1.23x (91-95%)   50257 1.70-1.75x -> 2.17-2.18x (80-83%)
//   float16   as bfloat16 within 2-3% of the time (jnp's float16 softmax is slower: 1.17-5.77x).
// Lab knobs, re-read at every launch: JK_SOFTMAX_WINDOW=1|0 forces the tier on wherever it fits, or off (the kVec = 1
// tiers); JK_SOFTMAX_WINDOW_REGS=0 keeps the two-pass form everywhere (1 or unset: the register form where it fits).
template <typename T>
cudaError_t LaunchWindowRows(const RowArgs<T>& a) {
  constexpr int64_t P = kVec16<T>;
  if (!KnobOr("JK_SOFTMAX_WINDOW", a.n > 1024) || a.mask->data != nullptr || a.n % P == 0 || !IsAligned(a.x, 16) ||
      !IsAligned(a.y, 16) || a.n >= (int64_t{1} << 30)) {
    return cudaErrorNotSupported;
  }
  constexpr int64_t kMaxGrid = int64_t{1} << 20;  // a grid-stride loop past this
  const int64_t packs = RowWindow<P>::WidestPacks(a.n);
  const unsigned warp_grid = static_cast<unsigned>(std::min(CeilDiv(a.rows, softmax::kWarpRowsBlock / 32), kMaxGrid));
  const unsigned cta_grid = static_cast<unsigned>(std::min(a.rows, kMaxGrid));
  if (KnobOr("JK_SOFTMAX_WINDOW_REGS", true) && packs <= int64_t{8} * softmax::kWindowRegsMaxThreads) {
    if (packs <= 32 * 4) {
      auto kernel =
          packs <= 32 * 2 ? softmax::WindowRowsRegsKernel<T, 2, true> : softmax::WindowRowsRegsKernel<T, 4, true>;
      kernel<<<warp_grid, softmax::kWarpRowsBlock, 0, a.stream>>>(a.x, a.y, a.rows, a.n, a.log);
    } else {
      // The C packs a thread that costs least by warps x (C + 2): the warps' slots (each a pack's loads,
      // exponentials and stores) plus about two slots a warp of fixed work (the CTA reduction, the row's setup).
      // Fitted to call 8 (bench/lab/s33_softmax_c_lab_h200.txt, 16-bit, 4 -> 8 packs a thread, x jnp): 1537 columns
      // (193 packs: 2 warps of 4 against 1 of 8) 1.17-1.31x -> 1.41-1.54x; 2051 (257: 3 warps against 2) 1.00-1.04x
      // -> 0.86-0.87x; 4099 (513: 5 against 3) a tie; 8195 (1025: 9 against 5) 1.08-1.09x -> 1.18-1.21x. Float32
      // tied at every length (96-97% of copy either way); 2 packs a thread lost everywhere (0.92-0.98x of 4). Checked
      // in call 9 (bench/lab/s33_softmax_rule_lab_h200.txt) at 4 more lengths, 16-bit, rule (= 8) against 4: 1281
      // 1.26-1.32x against 1.12-1.17x, 3075 1.20-1.26x / 1.10-1.16x, 6147 1.19-1.23x / 1.08-1.14x, 12291 1.22-1.24x /
      // 1.13-1.14x; at 4099 (a tie by the rule, 8) 1.07-1.08x against 1.05-1.10x.
      // Session 34 added 5 and 6 packs a thread (C < 8 while it needs at most 512 threads), the same cost deciding,
      // ties to the larger C. Call 6 (bench/lab/s34_window_lab_h200.txt; best of 3 rounds, x jnp, softmax /
      // log_softmax), bfloat16, the 4-or-8 rule -> this one: 2051 (C 4 -> 5) 1.04 / 1.00x -> 1.16 / 1.14x (73% ->
      // 81-84% of copy); 4099 (8 -> 6) 1.08 / 1.08x -> 1.28 / 1.23x (82-86% -> 97%); 6147 (8 -> 5) 1.21 / 1.22x ->
      // 1.28 / 1.24x; 8195 (8 -> 6) 1.19 / 1.21x -> 1.24 / 1.23x; 1537, 3075 and 12291 keep 8 (C = 5 / 6 within -3% to
      // +3% of it there). float32 within 1% of the best C at every length (C = 5 lost 5-33% at 8195 and 12291; not
      // chosen).
      auto warps = [&](int c) { return CeilDiv(CeilDiv(packs, c), 32); };
      int c = 8;
      for (int k : {6, 5, 4}) {
        if (packs <= int64_t{k} * softmax::kBlockRowsMaxThreads && warps(k) * (k + 2) < warps(c) * (c + 2)) c = k;
      }
      // 16-bit rows past 1024 packs (8185 columns; session 35): 6 or 8 packs a thread by the rows resident per SM
      // (the registers decide: 54 / 62 a thread for bfloat16, 52 / 64 for float16), 6 where they tie. The cost above
      // ranks by warps only; at these lengths a row is 9-32 warps and 1-4 rows fit an SM, and one row more or less
      // in flight decides. H200, bfloat16, C = 6 against 8, softmax (bench/lab/s35_h200.md calls 1 and 6): rows
      // resident 4 / 4 at 12291 columns 294.8 against 300.3 us; 3 / 3 at 16381 262.9 / 277.1 and 16891 270.0 /
      // 279.7; 2 / 2 at 20483 264.8 / 281.3, 22531 283.7 / 293.2 and 24571 304.1 / 317.1; but 3 / 4 at 14339 239.1 /
      // 226.3 and 2 / 3 at 18435 336.1 / 294.7 (log_softmax the same way or tied). Float32 keeps the cost rule: its
      // C = 6 and 8 were within 1% at every length (96-98% of copy).
      if (sizeof(T) == 2 && packs > 1024 && packs <= int64_t{6} * softmax::kWindowRegsMaxThreads) {
        const int r6 = WindowRegsRowsPerSm<T, 6>(packs), r8 = WindowRegsRowsPerSm<T, 8>(packs);
        if (r6 > 0 && r8 > 0) c = r6 >= r8 ? 6 : 8;
      }
      // Lab knob JK_SOFTMAX_WINDOW_C=2|4|5|6|8 (re-read at every launch): that many packs a thread where the window
      // fits.
      if (const int f = EnvInt("JK_SOFTMAX_WINDOW_C", 0);
          (f == 2 || f == 4 || f == 5 || f == 6 || f == 8) && packs <= int64_t{f} * softmax::kWindowRegsMaxThreads) {
        c = f;
      }
      const int threads = static_cast<int>(CeilDiv(CeilDiv(packs, c), 32) * 32);
      auto kernel = c == 2   ? softmax::WindowRowsRegsKernel<T, 2, false>
                    : c == 4 ? softmax::WindowRowsRegsKernel<T, 4, false>
                    : c == 5 ? softmax::WindowRowsRegsKernel<T, 5, false>
                    : c == 6 ? softmax::WindowRowsRegsKernel<T, 6, false>
                             : softmax::WindowRowsRegsKernel<T, 8, false>;
      kernel<<<cta_grid, threads, 0, a.stream>>>(a.x, a.y, a.rows, a.n, a.log);
    }
    return LastLaunchError();
  }
  if (packs <= 64) {
    softmax::WindowRowsKernel<T, true><<<warp_grid, softmax::kWarpRowsBlock, 0, a.stream>>>(a.x, a.y, a.rows, a.n,
                                                                                            a.log);
  } else {
    // About 4 packs a thread per pass, in whole warps, at most 512 threads.
    const int threads =
        static_cast<int>(std::min<int64_t>(softmax::kBlockRowsMaxThreads, CeilDiv(CeilDiv(packs, 4), 32) * 32));
    softmax::WindowRowsKernel<T, false><<<cta_grid, threads, 0, a.stream>>>(a.x, a.y, a.rows, a.n, a.log);
  }
  return LastLaunchError();
}

template <typename T>
cudaError_t Softmax(cudaStream_t stream, const void* x, void* y, int64_t outer, int64_t n, int64_t inner,
                    const MaskIndex& mask, bool log, const Workspace& ws) {
  const T* xt = static_cast<const T*>(x);
  T* yt = static_cast<T*>(y);
  if (inner != 1) {
    return LaunchColumns<T, ColumnsMode::kSoftmax>(stream, xt, yt, nullptr, nullptr, nullptr, nullptr, outer, n,
                                                   inner, mask, log, ws);
  }
  const RowArgs<T> a{stream, xt, yt, outer, n, &mask, log};
  const bool masked = mask.data != nullptr;
  if (CanVectorise(a)) {
    return masked ? LaunchRows<T, kVec16<T>, true>(a) : LaunchRows<T, kVec16<T>, false>(a);
  }
  if (const cudaError_t e = LaunchWindowRows<T>(a); e != cudaErrorNotSupported) return e;
  return masked ? LaunchRows<T, 1, true>(a) : LaunchRows<T, 1, false>(a);
}

template <typename Fn>
cudaError_t Dispatch(DType dtype, Fn&& fn) {
  return DispatchFloat<float, __nv_bfloat16, __half>(dtype, cudaErrorInvalidValue, fn);
}

}  // namespace

cudaError_t LaunchSoftmax(cudaStream_t stream, DType dtype, const void* x, void* y, int64_t outer, int64_t n,
                          int64_t inner, const MaskIndex& mask, bool log, const Workspace& ws) {
  return Dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Softmax<T>(stream, x, y, outer, n, inner, mask, log, ws);
  });
}

cudaError_t LaunchSoftmaxStats(cudaStream_t stream, DType dtype, const void* x, float* row_max, float* row_sum,
                               int64_t outer, int64_t n, int64_t inner, const MaskIndex& mask) {
  return Dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xt = static_cast<const T*>(x);
    if (inner == 1 && !softmax::LegacyStatsApply()) {
      // Rows contiguous: row-wise, 16-byte packs where allowed (softmax_stats_apply.cuh).
      const RowArgs<T> a{stream, xt, nullptr, outer, n, &mask, false};
      const bool masked = mask.data != nullptr;
      constexpr int kVec = kVec16<T>;
      if (CanVectorise(a)) {
        return masked ? softmax::LaunchRowStats<T, kVec, true>(stream, xt, row_max, row_sum, outer, n, mask)
                      : softmax::LaunchRowStats<T, kVec, false>(stream, xt, row_max, row_sum, outer, n, mask);
      }
      return masked ? softmax::LaunchRowStats<T, 1, true>(stream, xt, row_max, row_sum, outer, n, mask)
                    : softmax::LaunchRowStats<T, 1, false>(stream, xt, row_max, row_sum, outer, n, mask);
    }
    return LaunchColumns<T, ColumnsMode::kStats>(stream, xt, nullptr, row_max, row_sum, nullptr, nullptr, outer,
                                                 n, inner, mask, false);
  });
}

cudaError_t LaunchSoftmaxApply(cudaStream_t stream, DType dtype, const void* x, const float* row_max,
                               const float* row_sum, void* y, int64_t outer, int64_t n, int64_t inner,
                               const MaskIndex& mask, bool log) {
  return Dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xt = static_cast<const T*>(x);
    T* yt = static_cast<T*>(y);
    if (inner == 1 && !softmax::LegacyStatsApply()) {
      const RowArgs<T> a{stream, xt, yt, outer, n, &mask, log};
      const bool masked = mask.data != nullptr;
      constexpr int kVec = kVec16<T>;
      if (CanVectorise(a)) {
        return masked ? softmax::LaunchRowApply<T, kVec, true>(stream, xt, yt, row_max, row_sum, outer, n, mask, log)
                      : softmax::LaunchRowApply<T, kVec, false>(stream, xt, yt, row_max, row_sum, outer, n, mask, log);
      }
      return masked ? softmax::LaunchRowApply<T, 1, true>(stream, xt, yt, row_max, row_sum, outer, n, mask, log)
                    : softmax::LaunchRowApply<T, 1, false>(stream, xt, yt, row_max, row_sum, outer, n, mask, log);
    }
    return LaunchColumns<T, ColumnsMode::kApply>(stream, xt, yt, nullptr, nullptr, row_max, row_sum, outer, n,
                                                 inner, mask, log);
  });
}

}  // namespace jk
