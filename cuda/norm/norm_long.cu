// The norms' ring tier: shape rule and launch (kernels in common/long_rows.cuh, ops in norm_long.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdlib>

#include "common/launch.h"
#include "norm/norm_long.cuh"
#include "norm/norm_long.h"

namespace jk::norm {

namespace {
bool Sm90() {
  constexpr int kMaxDevices = 64;
  static int cache[kMaxDevices] = {0};  // 0 unknown, 1 no, 2 yes
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return false;
  if (cache[dev] == 0) {
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) major = 0;
    cache[dev] = major >= 9 ? 2 : 1;
  }
  return cache[dev] == 2;
}

// Default entries {sizeof(T), min n, max n, {true, C, U, L}} per norm, from bench/lab/norm_long_lab.py on an
// H200; none yet (the lab's one GPU run ran out of memory before timing anything; the tests passed).
template <typename T, Kind K>
long_rows::RingChoice DefaultChoice(int64_t n) {
  return long_rows::RuleFor({}, sizeof(T), n);  // per-norm entries: branch on K here
}
}  // namespace

template <typename T, Kind K>
cudaError_t LaunchLongRows(const Params<T>& p, cudaStream_t stream) {
  const long_rows::RingChoice ch = long_rows::ParseRing(std::getenv("JK_NORM_LONG"), DefaultChoice<T, K>(p.n));
  if (!ch.enabled || p.inner != 1 || !Sm90()) return cudaErrorNotSupported;
  return long_rows::LaunchRing<T>(RingNormOp<T, K>{p}, p.x, p.y, p.outer, p.n, ch, stream);
}

template cudaError_t LaunchLongRows<float, Kind::kLayerNorm>(const Params<float>&, cudaStream_t);
template cudaError_t LaunchLongRows<float, Kind::kRmsNorm>(const Params<float>&, cudaStream_t);
template cudaError_t LaunchLongRows<__nv_bfloat16, Kind::kLayerNorm>(const Params<__nv_bfloat16>&, cudaStream_t);
template cudaError_t LaunchLongRows<__nv_bfloat16, Kind::kRmsNorm>(const Params<__nv_bfloat16>&, cudaStream_t);
template cudaError_t LaunchLongRows<__half, Kind::kLayerNorm>(const Params<__half>&, cudaStream_t);
template cudaError_t LaunchLongRows<__half, Kind::kRmsNorm>(const Params<__half>&, cudaStream_t);

}  // namespace jk::norm
