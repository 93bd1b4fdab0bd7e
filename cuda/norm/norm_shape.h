// The geometry shared by the CUDA launchers and the CPU implementation. Plain C++.
#pragma once
#include <cstdint>

namespace jk {

// x viewed as (outer, n, inner) around the normalised axis (n elements, stride inner). scale/bias are
// (groups, n) row-major; row o in [0, outer) uses scale row o / (outer / scale_groups): a vmap over
// scale/bias stays one call by stacking the batch's parameter rows.
struct NormShape {
  int64_t outer = 0, n = 0, inner = 1;
  int64_t scale_groups = 1, bias_groups = 1;
};

}  // namespace jk
