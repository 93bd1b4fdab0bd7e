// The norms' cluster row-pairs tier: shape rule and launch (kernel in norm_cluster_pairs.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdlib>
#include <type_traits>

#include "common/launch.h"
#include "norm/norm_cluster.h"
#include "norm/norm_cluster_pairs.cuh"

namespace jk::norm {

namespace {
// The knobs that force the cluster tier's other kernels or forms (norm_cluster.cu): set, they keep this form out
// unless JK_NORM_PAIRS=1 asks for it.
bool OtherClusterFormForced() {
  for (const char* k : {"JK_NORM_CLUSTER", "JK_NORM_HYBRID", "JK_NORM_LEAN", "JK_NORM_FULL", "JK_NORM_SMEM_SCALE"})
    if (std::getenv(k) != nullptr) return true;
  return false;
}
// Clusters of `ctas` CTAs of two halves, kPacks packs a thread; `filled`: the rows fill every rank's packs.
template <typename T, Kind K, int kPacks>
cudaError_t LaunchPairs(const Params<T>& p, cudaStream_t stream, int ctas, bool filled) {
  auto kernel = ClusterRowPairsNorm<T, K, false, kPacks>;
  if constexpr (K == Kind::kRmsNorm || std::is_same_v<T, __nv_bfloat16>) {
    if (filled && KnobOr("JK_NORM_PAIRS_FULL", true)) kernel = ClusterRowPairsNorm<T, K, true, kPacks>;
  }
  constexpr size_t kSmem = size_t{K == Kind::kLayerNorm ? 2 : 1} * kPacks * kPairLanes * 16;
  // A persistent grid of as many clusters as fit (one CTA per SM), each taking two rows a step.
  return LaunchClusterGrid(kernel, ctas, 2 * kPairLanes, kSmem, CeilDiv(p.outer, 2), -1, stream, p);
}
// One parameter row for every row (the CTA copies it once), and contiguous rows.
template <typename T, Kind K>
bool PairsFit(const Params<T>& p) {
  if (p.inner != 1 || !RunsSm90Code()) return false;
  if (p.scale != nullptr && p.scale_rows_per_group < p.outer) return false;
  return K == Kind::kRmsNorm || p.bias == nullptr || p.bias_rows_per_group >= p.outer;
}
}  // namespace

// The default: every row past one CTA of the cluster tier (float32 n > 16384, 16-bit n > 32768) up to 8 CTAs' worth,
// except 16-bit LayerNorm rows that leave the last rank partly empty. H200, one process, CUPTI, 3 rotated rounds
// (bench/lab/s32_h200.md call 2, % of the copy ceiling, the tiers before -> this one):
//   LayerNorm float32  49152 x 20000 / 32768, 24576 x 65536   86.3 / 89.2 / 86.3% -> 89.6 / 92.5 / 90.6%
//   RMSNorm   float32  49152 x 20000 / 32768, 24576 x 65536   85.5 / 89.9 / 89.5% -> 91.4 / 93.3 / 91.7%
//   LayerNorm bf16 / f16  24576 x 65536                       89.5 / 89.0% -> 92.7 / 91.4%
//   RMSNorm   bf16 / f16  24576 x 40000 / 65536               89.2-92.2% -> 91.1-93.6%
//   LayerNorm bf16 / f16  24576 x 40000 (not taken)           79.9 / 79.2% -> 76.8 / 73.6%
// The form without column checks (kFull) where the rows fill every rank, except LayerNorm float32 (its kFull form
// spills 40 bytes) and float16 (89.1% against the checked form's 91.4%; bfloat16 92.7% against 91.7%). Lab knobs:
// JK_NORM_PAIRS=1|0 forces this form on or off wherever it fits; JK_NORM_PAIRS_FULL=0 keeps the checked form.
template <typename T, Kind K>
cudaError_t LaunchClusterRowPairs(const Params<T>& p, cudaStream_t stream) {
  if (p.n <= (sizeof(T) == 4 ? 16384 : 32768) || !PairsFit<T, K>(p)) return cudaErrorNotSupported;
  constexpr int64_t kElems = kPairPacks * (16 / sizeof(T));  // columns a thread holds
  // The smallest power-of-two cluster of full-width CTAs that holds the row, up to the portable limit of 8.
  const int ctas = RowSpanFor(p.n, kElems, kPairLanes, 8).ctas;
  if (ctas == 0) return cudaErrorNotSupported;
  const bool filled = p.n == ctas * kElems * kPairLanes;
  const bool by_default = !OtherClusterFormForced() && (sizeof(T) == 4 || K == Kind::kRmsNorm || filled);
  if (!KnobOr("JK_NORM_PAIRS", by_default)) return cudaErrorNotSupported;
  return LaunchPairs<T, K, kPairPacks>(p, stream, ctas, filled);
}

// Rows of one CTA, 4 packs a thread (float32 n <= 8192, 16-bit <= 16384): the default for float32 LayerNorm rows of
// 6145-8192 columns. H200, one process, CUPTI, 3 rotated rounds (bench/lab/s32_h200.md calls 3-4, 49152 rows, % of
// the copy ceiling, the tiers before (a CTA per row in registers; at 8192 the bulk tier) -> this one):
//   LayerNorm float32  7168 / 8192   74.1% (0.92x jnp) / 88.3% -> 88.5% / 91.3%
//                      4096 / 5120 / 6144   92.0 / 89.9 / 86.5% -> 65.2 / 75.6 / 82.7% (not taken)
//   RMSNorm float32    5120-8192            96.0-97.4% -> 79.2-92.1% (not taken)
// Lab knob JK_NORM_PAIRS_SHORT=1|0 forces it on or off wherever the row fits.
template <typename T, Kind K>
cudaError_t LaunchRowPairsShort(const Params<T>& p, cudaStream_t stream) {
  constexpr int64_t kSpan = int64_t{4} * kPairLanes * (16 / sizeof(T));
  if (p.n > kSpan || !PairsFit<T, K>(p)) return cudaErrorNotSupported;
  const bool by_default = sizeof(T) == 4 && K == Kind::kLayerNorm && p.n > 6144 && !OtherClusterFormForced();
  if (!KnobOr("JK_NORM_PAIRS_SHORT", by_default)) return cudaErrorNotSupported;
  return LaunchPairs<T, K, 4>(p, stream, 1, p.n == kSpan);
}

template cudaError_t LaunchClusterRowPairs<float, Kind::kLayerNorm>(const Params<float>&, cudaStream_t);
template cudaError_t LaunchClusterRowPairs<float, Kind::kRmsNorm>(const Params<float>&, cudaStream_t);
template cudaError_t LaunchClusterRowPairs<__nv_bfloat16, Kind::kLayerNorm>(const Params<__nv_bfloat16>&, cudaStream_t);
template cudaError_t LaunchClusterRowPairs<__nv_bfloat16, Kind::kRmsNorm>(const Params<__nv_bfloat16>&, cudaStream_t);
template cudaError_t LaunchClusterRowPairs<__half, Kind::kLayerNorm>(const Params<__half>&, cudaStream_t);
template cudaError_t LaunchClusterRowPairs<__half, Kind::kRmsNorm>(const Params<__half>&, cudaStream_t);
template cudaError_t LaunchRowPairsShort<float, Kind::kLayerNorm>(const Params<float>&, cudaStream_t);
template cudaError_t LaunchRowPairsShort<float, Kind::kRmsNorm>(const Params<float>&, cudaStream_t);
template cudaError_t LaunchRowPairsShort<__nv_bfloat16, Kind::kLayerNorm>(const Params<__nv_bfloat16>&, cudaStream_t);
template cudaError_t LaunchRowPairsShort<__nv_bfloat16, Kind::kRmsNorm>(const Params<__nv_bfloat16>&, cudaStream_t);
template cudaError_t LaunchRowPairsShort<__half, Kind::kLayerNorm>(const Params<__half>&, cudaStream_t);
template cudaError_t LaunchRowPairsShort<__half, Kind::kRmsNorm>(const Params<__half>&, cudaStream_t);

}  // namespace jk::norm
