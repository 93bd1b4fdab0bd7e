// The driver's tensor-map encoder (cuTensorMapEncodeTiled) through the runtime's driver entry point, so nothing
// links against libcuda: the host side of every TMA tier (matmul_tma_host.h, the transpose's row copy). Host code
// only (included by .cu files).
#pragma once
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime_api.h>

namespace jk {

using EncodeTiledFn = PFN_cuTensorMapEncodeTiled_v12000;

// Null if the driver has none.
inline EncodeTiledFn EncodeTiled() {
  static const EncodeTiledFn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();  // leave no sticky error for the next launch check
      return EncodeTiledFn{nullptr};
    }
    return reinterpret_cast<EncodeTiledFn>(f);
  }();
  return fn;
}

}  // namespace jk
