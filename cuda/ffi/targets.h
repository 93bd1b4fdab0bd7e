// The FFI targets each op file contributes to the extension's registrations() dict. One target name
// is registered on every platform it has a handler for ("cpu" and "CUDA"), so the JAX lowering is the
// same on both.
#pragma once
#include <vector>

#include "xla/ffi/api/c_api.h"

namespace jk {

struct Target {
  const char* name;       // stable ABI: "jk_<op>"
  XLA_FFI_Handler* cpu;   // never null
  XLA_FFI_Handler* cuda;  // null when the extension was built without CUDA
};
using TargetList = std::vector<Target>;

void AddNormTargets(TargetList& targets);       // norm_ffi.cc
void AddSoftmaxTargets(TargetList& targets);    // softmax_ffi.cc
void AddTransposeTargets(TargetList& targets);  // transpose_ffi.cc
void AddMatmulTargets(TargetList& targets);     // matmul_ffi.cc

}  // namespace jk

// The CUDA handler of a target, or null in a CPU-only build.
#ifdef JK_WITH_CUDA
#define JK_CUDA_HANDLER(h) (h)
#else
#define JK_CUDA_HANDLER(h) nullptr
#endif
