// Launcher seam between the FFI handler and the CUDA kernels. Plain C++ plus the CUDA runtime API.
#pragma once
#include <cuda_runtime_api.h>

#include "transpose/transpose_plan.h"

namespace jk {

// Runs `plan` (from PlanTranspose) on `stream`: kCopy as a device-to-device memcpy, kRowCopy and
// kTiled as kernels whose tier is chosen by the group sizes and the buffers' alignment. Never
// synchronises; returns the launch error, if any. x and y must not overlap.
cudaError_t LaunchTranspose(cudaStream_t stream, const TransposePlan& plan, const void* x, void* y);

}  // namespace jk
