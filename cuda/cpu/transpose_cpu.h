// CPU transpose: the same planner as the CUDA launcher, so both backends run the same plan.
#pragma once
#include <cstdint>

#include "transpose/transpose_plan.h"

namespace jk::cpu {

// Executes a plan made by PlanTranspose (any kind). `x` and `y` must not overlap.
void Transpose(const TransposePlan& plan, const void* x, void* y);

}  // namespace jk::cpu
