// Whether this build's sm_90 code runs on the current device (see RunsSm90Code in launch.h).
#include "common/launch.h"

namespace jk {
namespace {
// Compiled for every target architecture like the kernels: the binary the runtime picks for it on a device
// (and so its ptxVersion) is the one it picks for every kernel of the library.
__global__ void Sm90Probe() {}
}  // namespace

bool RunsSm90Code() {
  constexpr int kMaxDevices = 64;
  static signed char cache[kMaxDevices] = {0};  // 0 unknown, 1 yes, -1 no; benign race (same value)
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return false;
  if (cache[dev] == 0) {
    cudaFuncAttributes attr{};
    const bool ok = ComputeMajor() >= 9 && cudaFuncGetAttributes(&attr, Sm90Probe) == cudaSuccess &&
                    attr.ptxVersion >= 90;
    (void)cudaGetLastError();
    cache[dev] = ok ? 1 : -1;
  }
  return cache[dev] == 1;
}

}  // namespace jk
