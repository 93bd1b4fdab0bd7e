// Host entry of the norms' ring tier (norm_long.cu): long rows read from DRAM once through a
// shared-memory ring (common/long_rows.cuh). Included by norm_launch.cu only (it needs norm::Params).
#pragma once
#include <cuda_runtime_api.h>

#include "norm/norm_kernels.cuh"

namespace jk::norm {

// Normalises vectorised rows (the caller checks n % P == 0 and 16-byte alignment) with the ring tier where
// its shape rule (or the lab knob JK_NORM_LONG = "off" / "ring C U L", read at every launch) takes them;
// otherwise cudaErrorNotSupported before launching anything.
template <typename T, Kind K>
cudaError_t LaunchLongRows(const Params<T>& p, cudaStream_t stream);

}  // namespace jk::norm
