// The norms' window tier: shape rule and launch (kernel in norm_window.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdlib>

#include "common/launch.h"
#include "norm/norm_window.cuh"
#include "norm/norm_window.h"

namespace jk::norm {

// A warp per row up to 256 packs in the widest window (float32 n <= 1021, 16-bit n <= 2034), 1-8 packs a lane, four
// rows a CTA; a CTA of up to 512 threads per row up to 4096 packs (4 packs a thread up to 2048, else 8); longer rows
// keep the two-read kernel. H200, one process, CUPTI, 3 rotated rounds (bench/lab/s32_h200.md calls 8-9, 49152 rows,
// x jnp, the scalar tiers before -> this one; call 9 with bfloat16's packs pinned, norm_window.cuh):
//   1001 columns      0.11-0.23x -> 1.12-1.34x        2035    0.17-0.43x -> 0.94-1.38x
//   4099              0.26-0.52x -> 1.01-1.35x        10001   0.58-0.86x -> 1.16-2.05x (call 8)
//   16381             0.66-1.03x -> 1.04-1.87x
//   97 (lane groups)  1.21-1.51x -> 0.65-1.25x: not taken; the caller's rule keeps the lane groups' rows.
// Lab knob JK_NORM_WINDOW=1|0 (re-read at every launch) forces it on wherever the row fits, or off.
template <typename T, Kind K>
cudaError_t LaunchWindowRows(const Params<T>& p, cudaStream_t stream, bool by_default) {
  constexpr int64_t P = 16 / sizeof(T);
  if (p.inner != 1 || p.n % P == 0 || !IsAligned(p.x, 16) || !IsAligned(p.y, 16)) return cudaErrorNotSupported;
  if (!KnobOr("JK_NORM_WINDOW", by_default)) return cudaErrorNotSupported;
  constexpr int64_t kMaxGrid = int64_t{1} << 20;  // a grid-stride loop past this
  const int64_t packs = RowWindow<P>::WidestPacks(p.n);
  if (packs <= 32 * 8) {
    constexpr int kThreads = 128;
    const dim3 grid(static_cast<unsigned>(std::min(CeilDiv(p.outer, kThreads / 32), kMaxGrid)));
    if (packs <= 32) WindowRowsNorm<T, K, 1, true><<<grid, kThreads, 0, stream>>>(p);
    else if (packs <= 64) WindowRowsNorm<T, K, 2, true><<<grid, kThreads, 0, stream>>>(p);
    else if (packs <= 128) WindowRowsNorm<T, K, 4, true><<<grid, kThreads, 0, stream>>>(p);
    else WindowRowsNorm<T, K, 8, true><<<grid, kThreads, 0, stream>>>(p);
    return LastLaunchError();
  }
  if (packs > 512 * 8) return cudaErrorNotSupported;
  const int c = packs <= 512 * 4 ? 4 : 8;
  const int threads = static_cast<int>(CeilDiv(CeilDiv(packs, c), 32) * 32);
  const dim3 grid(static_cast<unsigned>(std::min(p.outer, kMaxGrid)));
  if (c == 4) WindowRowsNorm<T, K, 4, false><<<grid, threads, 0, stream>>>(p);
  else WindowRowsNorm<T, K, 8, false><<<grid, threads, 0, stream>>>(p);
  return LastLaunchError();
}

template cudaError_t LaunchWindowRows<float, Kind::kLayerNorm>(const Params<float>&, cudaStream_t, bool);
template cudaError_t LaunchWindowRows<float, Kind::kRmsNorm>(const Params<float>&, cudaStream_t, bool);
template cudaError_t LaunchWindowRows<__nv_bfloat16, Kind::kLayerNorm>(const Params<__nv_bfloat16>&, cudaStream_t, bool);
template cudaError_t LaunchWindowRows<__nv_bfloat16, Kind::kRmsNorm>(const Params<__nv_bfloat16>&, cudaStream_t, bool);
template cudaError_t LaunchWindowRows<__half, Kind::kLayerNorm>(const Params<__half>&, cudaStream_t, bool);
template cudaError_t LaunchWindowRows<__half, Kind::kRmsNorm>(const Params<__half>&, cudaStream_t, bool);

}  // namespace jk::norm
