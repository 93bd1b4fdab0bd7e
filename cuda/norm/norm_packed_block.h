// Host entry of the packed 16-bit row tier (norm_packed_block.cuh). Included by norm_launch.cu only (it
// needs norm::Params, defined with the kernels).
#pragma once
#include <cuda_runtime_api.h>

#include "norm/norm_kernels.cuh"

namespace jk::norm {

struct PackedBlockConfig {
  int elems = 32;          // elements per thread: 16, 32 or 64 (2, 4 or 8 packs)
  bool warp_rows = false;  // a warp per row (rows of at most 32 * elems) instead of a CTA per row
  int threads = 0;         // CTA width of the warp-row layout (0: 256); the CTA-per-row layout takes
                           // n / elems threads rounded up to a warp
};

// Longest row of the tier: 512 threads x 64 elements.
constexpr int64_t kPackedBlockMaxColumns = 32768;

// bf16/f16 rows in 16-byte packs (the caller checks n % 8 == 0 and 16-byte alignment of x, y, scale,
// bias), inner == 1. A row the configuration cannot hold (or float32): cudaErrorNotSupported, before
// launching anything.
template <typename T, Kind K>
cudaError_t LaunchBlockPerRowPacked(const Params<T>& p, cudaStream_t stream, const PackedBlockConfig& cfg);

}  // namespace jk::norm
