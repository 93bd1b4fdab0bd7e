// Launches of the packed 16-bit row tier (norm_packed_block.cuh): packs per thread and the register cap
// from the configuration, one CTA (or one warp) per row.
#include <algorithm>

#include "common/launch.h"
#include "norm/norm_packed_block.cuh"
#include "norm/norm_packed_block.h"

namespace jk::norm {
namespace {

// Grids beyond this many CTAs loop over rows instead (as the other row tiers).
constexpr int64_t kMaxPackedBlocks = int64_t{1} << 20;

// Register caps by elements per thread (as CTAs of 512 per SM): a CTA per row 16 -> 4 (32 registers), 32
// -> 3 (40, as softmax's packed tier), 64 -> 2 (64); a warp per row 16 -> 3 and 32 -> 2: its LayerNorm
// spilled 28-40 bytes under caps of 32 / 40 (the row's 64-bit indices and parameter pointers, with no
// bar.sync to bound the scheduler), and takes what it needs (~44 registers: 5 CTAs of 256).
template <int kElems, bool kWarpRow>
constexpr int kMinBlocksFor = kWarpRow ? (kElems == 16 ? 3 : 2) : kElems == 16 ? 4 : kElems == 32 ? 3 : 2;

template <typename T, Kind K, int kElems, bool kWarpRow>
cudaError_t Launch(const Params<T>& p, cudaStream_t stream, int threads) {
  constexpr int kPacks = kElems / 8;
  const int64_t packs = p.n / 8;
  int64_t blocks;
  if constexpr (kWarpRow) {
    if (packs > 32 * kPacks) return cudaErrorNotSupported;
    blocks = std::min(CeilDiv(p.outer, int64_t{threads / 32}), kMaxPackedBlocks);
  } else {
    threads = static_cast<int>(CeilDiv(CeilDiv(packs, kPacks), 32) * 32);
    if (threads > kPackedBlockMaxThreads) return cudaErrorNotSupported;
    blocks = std::min(p.outer, kMaxPackedBlocks);
  }
  BlockPerRowPacked<T, K, kPacks, kMinBlocksFor<kElems, kWarpRow>, kWarpRow>
      <<<static_cast<unsigned>(blocks), threads, 0, stream>>>(p);
  return LastLaunchError();
}

}  // namespace

template <typename T, Kind K>
cudaError_t LaunchBlockPerRowPacked(const Params<T>& p, cudaStream_t stream, const PackedBlockConfig& cfg) {
  if constexpr (sizeof(T) != 2) {
    return cudaErrorNotSupported;
  } else {
    if (p.inner != 1 || p.n % 8 != 0 || p.n > kPackedBlockMaxColumns || p.n < 8) return cudaErrorNotSupported;
    if (cfg.warp_rows) {
      const int threads = cfg.threads == 0 ? 256 : cfg.threads;
      if (threads % 32 != 0 || threads < 32 || threads > kPackedBlockMaxThreads) return cudaErrorNotSupported;
      switch (cfg.elems) {
        case 16: return Launch<T, K, 16, true>(p, stream, threads);
        case 32: return Launch<T, K, 32, true>(p, stream, threads);
        case 64: return Launch<T, K, 64, true>(p, stream, threads);
        default: return cudaErrorNotSupported;
      }
    }
    switch (cfg.elems) {
      case 16: return Launch<T, K, 16, false>(p, stream, 0);
      case 32: return Launch<T, K, 32, false>(p, stream, 0);
      case 64: return Launch<T, K, 64, false>(p, stream, 0);
      default: return cudaErrorNotSupported;
    }
  }
}

#define JK_PACKED_BLOCK(T, K) \
  template cudaError_t LaunchBlockPerRowPacked<T, K>(const Params<T>&, cudaStream_t, const PackedBlockConfig&);
JK_PACKED_BLOCK(float, Kind::kLayerNorm)
JK_PACKED_BLOCK(float, Kind::kRmsNorm)
JK_PACKED_BLOCK(__nv_bfloat16, Kind::kLayerNorm)
JK_PACKED_BLOCK(__nv_bfloat16, Kind::kRmsNorm)
JK_PACKED_BLOCK(__half, Kind::kLayerNorm)
JK_PACKED_BLOCK(__half, Kind::kRmsNorm)
#undef JK_PACKED_BLOCK

}  // namespace jk::norm
