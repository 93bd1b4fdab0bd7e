// Host entry of the norms' cluster tier (norm_cluster.cu): rows too long for one CTA held in a thread-block
// cluster's registers, read once. Included by norm_launch.cu only (it needs norm::Params).
#pragma once
#include <cuda_runtime_api.h>

#include "norm/norm_kernels.cuh"

namespace jk::norm {

// Normalises vectorised rows (the caller checks n % P == 0 and 16-byte alignment, inner == 1) with the
// cluster tier where its shape rule (or the lab knob JK_NORM_CLUSTER = "E R" / "off", read at every launch)
// takes them; otherwise cudaErrorNotSupported before launching anything.
template <typename T, Kind K>
cudaError_t LaunchClusterRows(const Params<T>& p, cudaStream_t stream);

// The row-pairs form of that tier (norm_cluster_pairs.cu): CTAs of two 512-thread halves, each its own row, with
// the parameter rows in shared memory. Same preconditions; one parameter row for all rows.
template <typename T, Kind K>
cudaError_t LaunchClusterRowPairs(const Params<T>& p, cudaStream_t stream);
// The same form on rows of one CTA, 4 packs a thread, where its rule (or JK_NORM_PAIRS_SHORT) takes the row: float32
// LayerNorm rows of 6145-8192 columns; cudaErrorNotSupported otherwise.
template <typename T, Kind K>
cudaError_t LaunchRowPairsShort(const Params<T>& p, cudaStream_t stream);

}  // namespace jk::norm
