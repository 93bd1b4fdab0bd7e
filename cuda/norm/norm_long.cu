// The norms' ring tier: shape rule and launch (kernels in common/long_rows.cuh, ops in norm_long.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdlib>

#include "common/launch.h"
#include "norm/norm_long.cuh"
#include "norm/norm_long.h"

namespace jk::norm {

namespace {
bool Sm90() { return RunsSm90Code(); }

// Default entries {sizeof(T), min n, max n, {true, C, U, L}} per norm. Measured on an H200 (bench/lab/
// softmax_long_lab.py --norms, bench/lab/long_rows_h200.txt; 49152 rows, 24576 at 65536; CUPTI; one process
// with jnp), ms against the two-read tier:
//   RMSNorm float32 65536     4.90 (0.91x jnp) -> ring 4 2 6: 4.40 (1.01x); ring 2 4 3: 4.59-4.65
//                             (0.96-0.97x), 2 4 1: 4.66, 2 2 6 / 2 2 3: 5.23, 1 x: 5.28-5.65, 4 4 3: 5.06
//                             (two runs: bench/lab/long_rows_h200.txt, bench/lab/rms65536_probe_h200.txt)
//   RMSNorm bf16/f16 65536    2.29 (1.17x)     -> ring 1 4 3: 2.12-2.18 (1.23-1.27x)
// LayerNorm lost at every measured length (float32 16384-65536 and 16-bit 65536: 0.63-0.86x of jnp against
// 1.14-1.47x for the two-read tier; not analysed further), and so did RMSNorm float32 16384 and 32768 (0.90-1.13x against 1.14-1.21x): no entry.
template <typename T, Kind K>
long_rows::RingChoice DefaultChoice(int64_t n) {
  if constexpr (K == Kind::kRmsNorm) {
    return long_rows::RuleFor({{4, 32769, 65536, {true, 4, 2, 6}}, {2, 32769, 65536, {true, 1, 4, 3}}},
                              sizeof(T), n);
  }
  return long_rows::RingChoice{};
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
