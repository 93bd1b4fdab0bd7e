// Host entry of the short-row tier (norm_short.cu): persistent lane groups for rows of at most 128 packs.
// Included by norm_launch.cu only (it needs norm::Params, defined with the kernels).
#pragma once
#include <cuda_runtime_api.h>

#include "norm/norm_kernels.cuh"

namespace jk::norm {

struct ShortConfig {
  int rows_per_group = 2;   // R: rows each lane group loads before reducing any (1, 2, 4; C > 1 takes 2 for 4)
  bool prefetch = false;    // load the next step's rows before this step's reductions (R <= 2)
  int max_ctas_per_sm = 0;  // 0: the occupancy calculator's maximum
  bool lean = false;        // 32-bit indices, float32 copies kept (lab only: not measured yet)
};

// Whether LaunchShortRows has an instantiation for rows of `packs` 16-byte packs: lane groups of 4-16 lanes
// with one pack each, or a warp with 1, 2 or 4 packs per lane.
inline bool ShortRowsFit(int64_t packs) { return packs >= 3 && packs <= 128; }

// Vectorised rows only (the caller checks n % P == 0 and 16-byte alignment).
template <typename T, Kind K>
cudaError_t LaunchShortRows(const Params<T>& p, cudaStream_t stream, const ShortConfig& cfg);

// The packed short-row tier (norm_short_packed.cuh): rows of exactly 64, 128, ..., 4096 bytes (bf16/f16 32 ...
// 2048 columns; float32 16 ... 1024), or 96, 192, 384, 768, 1536, 3072 bytes (3 or 6 packs a lane: bf16/f16 48,
// 96, 192 ... 1536, float32 24, 48, 96 ... 768), or 160 / 320 / 640 and 224 / 448 / 896 bytes (5 or 7 packs a lane:
// bf16/f16 80 / 160 / 320 and 112 / 224 / 448, float32 40 ... 224), vectorised (the caller checks alignment), one parameter row
// for every row, outer * n < 2^30 (32-bit offsets, with room for the grid's last step). Anything else:
// cudaErrorNotSupported, before launching.
struct PackedConfig {
  int packs_per_lane = 2;  // C in {1 (with R > 1), 2, ..., 8}; lanes per row W = packs / C, a power of two <= 32
  int rows_per_group = 1;  // R rows a lane group: 1, or (rows of <= 32 packs) 2 (C <= 4), 4 (C <= 2), 8 (C = 1)
};
template <typename T, Kind K>
cudaError_t LaunchShortRowsPacked(const Params<T>& p, cudaStream_t stream, const PackedConfig& cfg);

// One-pack lanes (norm_short_onepack.cuh): rows of exactly 64, 128 or 256 bytes (bf16/f16 32, 64, 128 columns; float32
// 16, 32, 64), at least one CTA's rows (32, 64 or 128), vectorised (the caller checks alignment), one parameter row for
// every row, outer * n < 2^30; 16-bit LayerNorm rows of 128 columns only in whole CTAs and without statistics.
// Anything else: cudaErrorNotSupported.
template <typename T, Kind K>
cudaError_t LaunchShortRowsOnePack(const Params<T>& p, cudaStream_t stream);

}  // namespace jk::norm
