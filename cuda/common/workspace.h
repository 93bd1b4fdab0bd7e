// Device scratch a caller hands to a launcher: the CUDA lowerings' optional float32 result (XLA allocates it, so a
// call stays graph-capturable; TakeWorkspace in ffi_helpers.h reads it). Plain C++.
#pragma once
#include <cstdint>

namespace jk {

// Absent: {nullptr, 0}. A tier that needs more than `bytes` is not taken.
struct Workspace {
  void* data = nullptr;
  int64_t bytes = 0;
};

}  // namespace jk
