// Host entry of the norms' window tier (norm_window.cu): rows of n % P != 0 elements over 16-byte-aligned x and y,
// read through 16-byte loads of the aligned packs that overlap each row. Included by norm_launch.cu only.
#pragma once
#include <cuda_runtime_api.h>

#include "norm/norm_kernels.cuh"

namespace jk::norm {

// Normalises contiguous rows (inner == 1) that the vectorised tiers refuse only for their length (x and y 16-byte
// aligned, n % P != 0), up to 4096 packs a row, where `by_default` (the caller's rule) or the lab knob
// JK_NORM_WINDOW=1 (read at every launch) says; otherwise, or with JK_NORM_WINDOW=0, cudaErrorNotSupported before
// launching anything.
template <typename T, Kind K>
cudaError_t LaunchWindowRows(const Params<T>& p, cudaStream_t stream, bool by_default);

}  // namespace jk::norm
