// Column tiles for reductions over a non-last axis (x viewed as (outer, n, inner), inner > 1), shared by the
// strided norm tier (norm/norm_strided.cuh) and the softmax columns tier (softmax/softmax_columns.cuh).
//
// A tile is TX 16-byte packs of consecutive inner positions (TX * P columns; P elements per pack) times the
// n elements of the axis. Thread (tx, ty) of a CTA of blockDim = (TX, TY) holds R packs of rows
// ty, ty + TY, ... in registers, so the tile is read ONCE. The scalar two-read kernels re-read it: at the
// benchmark's (64, 2048, 1024) bf16 they keep ~12 CTAs of 2048 x 32 columns (128 KB each) per SM in flight,
// ~200 MB against a 50 MB L2, so the re-read most likely comes from DRAM (an estimate: the H200 figures,
// 19-24% of the copy ceiling, were not profiled). One element per lane also made each warp request 64 B
// (bf16); here each lane moves 16 bytes. A warp covers 32 / TX
// consecutive rows of TX * 16 bytes each: whole 32-byte sectors. Tiles whose column is too long for one
// CTA's registers spread over a thread-block cluster (sm_90+): each CTA holds a contiguous range of rows
// and the per-column partials are exchanged through distributed shared memory.
// Device code plus a small host-side configuration parser (the lab knob JK_STRIDED_TILE).
#pragma once
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "common/device.cuh"
#include "common/launch.h"
#include "common/workspace.h"

namespace jk::tile {

constexpr int kMaxWarps = 32;
constexpr int kMaxCluster = 8;  // the portable cluster size limit

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define JK_TILE_HAS_CLUSTERS 1
#endif

// Hides a 64-bit value from the optimiser (no instruction): offsets recomputed from it are not merged with
// earlier ones (which would then stay live in registers across the reductions).
__device__ __forceinline__ void HideOffset(int64_t& v) {
#ifdef __CUDA_ARCH__
  asm volatile("" : "+l"(v));
#endif
}

// A 16-byte store spelled in PTX: through a Pack of 16-bit values nvcc split the store into four 4-byte
// STG.E (the norm tile's bf16 output, sm_90a SASS), as it did for the softmax block tiers (StoreRaw there).
// kStream: a streaming store (st.global.cs, evict-first), for outputs no later pass of the call reads.
template <bool kStream = false, typename PackT>
__device__ __forceinline__ void Store16(void* p, const PackT& v) {
  static_assert(sizeof(PackT) == 16, "16-byte packs");
  uint4 u;
  memcpy(&u, &v, 16);
#ifdef __CUDA_ARCH__
  if constexpr (kStream)
    asm volatile("st.global.cs.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(u.x), "r"(u.y), "r"(u.z), "r"(u.w));
  else
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(u.x), "r"(u.y), "r"(u.z), "r"(u.w));
#else
  memcpy(p, &u, 16);
#endif
}

// Shared memory of one CTA's reductions: per-warp partials, the CTA totals, and the cell the cluster reads.
template <int W>
struct Scratch {
  float warp[kMaxWarps][W];
  float total[W];
  float slot[W];
};

// All-reduce of each column over the slices of the tile (and over the CTAs of the cluster): thread (tx, ty)
// passes its V partials of columns tx * V + e; every thread gets the totals of its columns, and every CTA
// of a cluster gets bitwise the same totals (the ranks are combined in rank order everywhere). blockDim.x
// must be TX (a power of two <= 32) and blockDim.x * blockDim.y a multiple of 32.
template <int TX, int V, typename Op>
__device__ __forceinline__ void ColumnAllReduce(float (&v)[V], Scratch<TX * V>& sm, int cluster, float identity,
                                                Op op) {
  constexpr int W = TX * V;
  const int tid = threadIdx.y * TX + threadIdx.x;
  const int lane = tid & 31, warp = tid >> 5, warps = (blockDim.x * blockDim.y) >> 5;
  // Lanes of one column differ in the bits above log2(TX): a butterfly over those bits.
#pragma unroll
  for (int m = 16; m >= TX; m /= 2) {
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = op(v[e], __shfl_xor_sync(0xffffffffu, v[e], m, 32));
  }
  if (lane < TX) {
#pragma unroll
    for (int e = 0; e < V; ++e) sm.warp[warp][lane * V + e] = v[e];
  }
  __syncthreads();
  // One warp per column: lane w reads warp w's partial (the loop bound is warp-uniform).
  for (int col = warp; col < W; col += warps) {
    float r = lane < warps ? sm.warp[lane][col] : identity;
    r = WarpAllReduce<32>(r, op);
    if (lane == 0) sm.total[col] = r;
  }
  __syncthreads();
  if (cluster == 1) {
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = sm.total[threadIdx.x * V + e];
    return;
  }
  if (tid < W) sm.slot[tid] = sm.total[tid];
  ClusterBarrier();
#ifdef JK_TILE_HAS_CLUSTERS
  cooperative_groups::cluster_group cl = cooperative_groups::this_cluster();
#pragma unroll
  for (int e = 0; e < V; ++e) {
    const int col = threadIdx.x * V + e;
    float r = *cl.map_shared_rank(&sm.slot[col], 0);
    for (int q = 1; q < cluster; ++q) r = op(r, *cl.map_shared_rank(&sm.slot[col], q));
    v[e] = r;
  }
#endif
  ClusterBarrier();  // no CTA rewrites its slot (or exits) while another still reads it
}

// Thread (tx, ty)'s place in column tile `tile` (TX packs across): its rows first, first + blockDim.y, ... below
// j_end (count of them, at most R), its column pack's (o, 0, i) element at base; live: it has a column pack.
struct TileThread {
  bool live;
  int count;
  int64_t o, base, first;
};

template <int R, int P>
__device__ __forceinline__ TileThread PlaceInTile(int64_t tile, int TX, int64_t n, int64_t inner, int64_t outer,
                                                  int64_t j_begin, int64_t j_end) {
  TileThread t;
  const int64_t ipacks = inner / P;
  const int64_t cp = tile * TX + threadIdx.x;
  t.live = cp < outer * ipacks;
  t.o = t.live ? cp / ipacks : 0;
  t.base = t.o * n * inner + (t.live ? cp - t.o * ipacks : 0) * P;  // element (o, 0, i)
  // Rows j_begin + ty + r * slices for r < count: one 32-bit compare per pack instead of 64-bit row math.
  t.first = j_begin + threadIdx.y;
  t.count = t.live && t.first < j_end
                ? static_cast<int>(std::min<int64_t>(R, (j_end - t.first + blockDim.y - 1) / blockDim.y))
                : 0;
  return t;
}

// The split-axis tiers' shared-memory step: after a barrier, thread tid < TX * P of the CTA combines element e of pack
// tx over the slices (cell[ty][e][tx]); its column (o, i) as the statistic index o * inner + i, or -1 for a thread
// with no column (past TX * P, or past the last column pack).
template <int TX, int P>
__device__ __forceinline__ int64_t CombineColumn(int64_t tile, int64_t outer, int64_t inner, int& e, int& tx) {
  const int tid = static_cast<int>(threadIdx.y * TX + threadIdx.x);
  e = tid / TX;
  tx = tid % TX;
  const int64_t cp = tile * TX + tx, ipacks = inner / P;
  if (tid >= TX * P || cp >= outer * ipacks) return -1;
  const int64_t o = cp / ipacks;
  return o * inner + (cp - o * ipacks) * P + e;
}

// The split-axis tiers (norm/norm_split.cuh, softmax/softmax_split.cuh): axes longer than kSplitMinRows, in chunks of
// at least kSplitMinChunkRows rows across CTAs, each chunk's per-column statistics in a workspace of
// 2 * columns * (ceil(n / kSplitMinChunkRows) + 1) floats that the CUDA lowering adds (jax_kernels/_primitive.py:
// split_axis_workspace mirrors these two constants).
constexpr int64_t kSplitMinRows = 4096;
constexpr int64_t kSplitMinChunkRows = 256;
// The statistics pass: CTAs of kSplitThreads holding kSplitR packs a thread, TX <= 16 packs across, so a chunk has at
// least 8 * 512 / 16 = 256 rows (kSplitMinChunkRows). The apply pass: smaller CTAs, kApplyR rows a thread, 3-4 CTAs
// an SM (a streaming pass: occupancy, not rows held; at 4 the bf16 norm forms spilled 16-56 bytes).
constexpr int kSplitR = 8;
constexpr int kSplitThreads = 512;
constexpr int kApplyR = 4;
constexpr int kApplyThreads = 256;
static_assert(kSplitThreads / 16 * kSplitR >= kSplitMinChunkRows, "the workspace bound");

// ---- host side: the launch geometry -----------------------------------------------------------------
// One configuration: TX packs across, R packs per thread, at most kMaxThreads threads (all compile-time in
// the kernels' instantiations), a cluster of `cluster` CTAs along the axis (0: the fewest that fit).
struct Config {
  int tx = 0, r = 0, max_threads = 0, cluster = 0;
  bool legacy = false;  // the scalar two-read kernel (the previous default)
};

// The geometry of a launch for a given configuration, or ok = false when the column does not fit.
struct Geometry {
  bool ok = false;
  int ty = 0, cluster = 1;
  int64_t tiles = 0;
};

inline int64_t NextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

// rows_fit: the rows one CTA can hold (R * max_threads / TX). Clusters only where `clusters_ok` (sm_90+).
inline Geometry PlanTiles(const Config& c, int64_t outer, int64_t n, int64_t inner, int pack, bool clusters_ok) {
  Geometry g;
  if (c.tx <= 0 || c.r <= 0 || c.max_threads <= 0 || inner % pack != 0) return g;
  const int max_ty = c.max_threads / c.tx;
  const int64_t column_packs = outer * (inner / pack);
  g.tiles = (column_packs + c.tx - 1) / c.tx;
  int cl = c.cluster > 0 ? c.cluster : 1;
  if (c.cluster == 0) {
    while (cl < kMaxCluster && (n + cl - 1) / cl > int64_t{c.r} * max_ty) cl *= 2;
  }
  if (cl > 1 && !clusters_ok) return g;
  if (cl != 1 && cl != 2 && cl != 4 && cl != 8) return g;
  const int64_t rows = (n + cl - 1) / cl;
  const int64_t ty = std::max<int64_t>(NextPow2((rows + c.r - 1) / c.r), 32 / c.tx);
  if (ty > max_ty || g.tiles * cl > int64_t{0x7fffffff}) return g;  // one tile per CTA: gridDim.x < 2^31
  g.ok = true;
  g.ty = static_cast<int>(ty);
  g.cluster = cl;
  return g;
}

// The compiled configurations (TX, R, max threads), shared by the norm and softmax tiers. ptxas (sm_90a,
// norm): R = 4 at 1024 threads fits 64 registers (no spill); R = 8 at 1024 spills 32-128 bytes per thread
// (bf16/f32 LayerNorm); R = 8 at 512 with TX = 4: 107 registers; R = 16 at 512: 128, no spill.
template <typename Fn>
cudaError_t WithTileConfig(const Config& c, Fn&& fn) {
  using std::integral_constant;
  using I = int;
  if (c.tx == 2 && c.r == 4 && c.max_threads == 1024)
    return fn(integral_constant<I, 2>{}, integral_constant<I, 4>{}, integral_constant<I, 1024>{});
  if (c.tx == 2 && c.r == 8 && c.max_threads == 1024)
    return fn(integral_constant<I, 2>{}, integral_constant<I, 8>{}, integral_constant<I, 1024>{});
  if (c.tx == 2 && c.r == 16 && c.max_threads == 512)
    return fn(integral_constant<I, 2>{}, integral_constant<I, 16>{}, integral_constant<I, 512>{});
  if (c.tx == 4 && c.r == 8 && c.max_threads == 512)
    return fn(integral_constant<I, 4>{}, integral_constant<I, 8>{}, integral_constant<I, 512>{});
  if (c.tx == 4 && c.r == 16 && c.max_threads == 512)
    return fn(integral_constant<I, 4>{}, integral_constant<I, 16>{}, integral_constant<I, 512>{});
  return cudaErrorNotSupported;
}

// The default configuration for an axis of n elements, measured on an H200 (bench/lab/strided_h200.md: every
// configuration, the scalar two-read kernel and jnp in one process; LayerNorm, RMSNorm and softmax, float32,
// bfloat16, float16). TX = 4 with 16 packs per thread (2048 rows per CTA of 512) was best or within 8%
// wherever the axis fits one CTA (64 x 2048 x 1024: 1.29-2.08x jnp against 0.39-0.62x for the scalar
// kernel; 256 x 512 x 256: 1.30-1.62x); longer axes take TX = 2 (4096 rows per CTA, clusters of up to 8 past
// that: 8 x 4096 x 512 1.02-2.72x). Past 8 x 4096 rows (or without clusters past one CTA) PlanTiles
// declines and the scalar kernel runs.
inline Config DefaultConfig(int64_t n) {
  Config c;
  c.tx = n <= 2048 ? 4 : 2;
  c.r = 16;
  c.max_threads = 512;
  c.cluster = 0;
  return c;
}

// JK_STRIDED_TILE (lab knob, unset in normal use): "legacy" forces the scalar two-read kernels, "TX R THREADS
// [CLUSTER]" a tile configuration (CLUSTER 0 or absent: the fewest CTAs that hold the column). Read once per
// process, or at every launch with JK_STRIDED_TILE_DYNAMIC=1 (with XLA's command buffers off), so one
// process times every variant.
inline bool ParseConfig(Config& c) {
  const char* s = std::getenv("JK_STRIDED_TILE");
  if (s == nullptr || *s == '\0') return false;
  if (std::strncmp(s, "legacy", 6) == 0) {
    c = Config{};
    c.legacy = true;
    return true;
  }
  Config v;
  if (std::sscanf(s, "%d %d %d %d", &v.tx, &v.r, &v.max_threads, &v.cluster) < 3) return false;
  c = v;
  return true;
}

// The launch geometry of a split tier's three passes over (outer, n, inner) with P elements a pack, or ok = false
// where the tier does not apply (no or too small a workspace, a short axis, columns not in whole 16-byte packs,
// misaligned x / y, a grid past its limits). TX: the widest of 16 / 8 / 4 packs the columns fill (a CTA reads
// TX * 16 bytes of a row). The workspace holds the chunks' statistics (part: column-major, chunks per column), then
// the merged ones (stats).
struct SplitPlan {
  bool ok = false;
  int tx = 0;
  int64_t chunk_rows = 0, chunks = 0, tiles = 0, apply_blocks = 0, merge_blocks = 0;
  float2* part = nullptr;
  float2* stats = nullptr;
  dim3 Grid() const { return dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(chunks)); }
  dim3 Block() const { return dim3(tx, kSplitThreads / tx); }
  dim3 ApplyGrid() const { return dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(apply_blocks)); }
  dim3 ApplyBlock() const { return dim3(tx, kApplyThreads / tx); }
};

template <int P>
inline SplitPlan PlanSplit(int64_t outer, int64_t n, int64_t inner, const void* x, const void* y, const Workspace& ws) {
  SplitPlan s;
  if (ws.data == nullptr || n <= kSplitMinRows || inner % P != 0 || !IsAligned(x, 16) || !IsAligned(y, 16)) return s;
  const int64_t ipacks = inner / P, columns = outer * inner;
  s.tx = ipacks >= 16 ? 16 : ipacks >= 8 ? 8 : 4;
  s.chunk_rows = int64_t{kSplitThreads / s.tx} * kSplitR;
  s.chunks = CeilDiv(n, s.chunk_rows);
  s.tiles = CeilDiv(outer * ipacks, int64_t{s.tx});
  s.apply_blocks = CeilDiv(n, int64_t{kApplyThreads / s.tx} * kApplyR);
  s.merge_blocks = CeilDiv(columns * 32, int64_t{256});  // SplitMerge: a warp per column, CTAs of 256
  const int64_t need = (columns * s.chunks + columns) * static_cast<int64_t>(sizeof(float2));
  // gridDim.y < 2^16 (apply_blocks >= chunks), gridDim.x < 2^31
  if (need > ws.bytes || s.apply_blocks > 65535 || s.tiles > 0x7fffffff || s.merge_blocks > 0x7fffffff) return s;
  s.part = static_cast<float2*>(ws.data);
  s.stats = s.part + columns * s.chunks;
  s.ok = true;
  return s;
}

// fn(integral_constant<int, TX>) for the plan's TX (16, 8 or 4): the kernels take it as a template argument.
template <typename Fn>
cudaError_t WithSplitTx(int tx, Fn&& fn) {
  using std::integral_constant;
  if (tx == 16) return fn(integral_constant<int, 16>{});
  if (tx == 8) return fn(integral_constant<int, 8>{});
  return fn(integral_constant<int, 4>{});
}

// An on-by-default lab knob: off when the variable is "0".
inline bool KnobOn(const char* name) {
  const char* s = std::getenv(name);
  return s == nullptr || std::strcmp(s, "0") != 0;
}
// JK_STRIDED_TILE_DYNAMIC=1: the knobs here are read at every launch (one lab process times every variant, with
// XLA's command buffers off); otherwise once per process.
inline bool DynamicKnobs() {
  static const bool dynamic = std::getenv("JK_STRIDED_TILE_DYNAMIC") != nullptr;
  return dynamic;
}


// JK_SPLIT_STREAM=0: the split tiers' apply passes use plain loads and stores instead of evict-first ones (x's last
// read, y never read again in the call).
inline bool SplitStream() {
  static const bool once = KnobOn("JK_SPLIT_STREAM");
  return DynamicKnobs() ? KnobOn("JK_SPLIT_STREAM") : once;
}

// The forced configuration, if any.
inline bool ForcedConfig(Config& c) {
  static Config once;
  static const bool forced_once = ParseConfig(once);
  if (DynamicKnobs()) return ParseConfig(c);
  if (forced_once) c = once;
  return forced_once;
}

// The split-axis tiers run unless JK_STRIDED_SPLIT=0 or a JK_STRIDED_TILE configuration is forced (that knob times
// the register tile's configurations).
inline bool SplitEnabled() {
  static const bool once = KnobOn("JK_STRIDED_SPLIT");
  Config forced;
  return (DynamicKnobs() ? KnobOn("JK_STRIDED_SPLIT") : once) && !ForcedConfig(forced);
}

}  // namespace jk::tile
