// Launches of the short-row tier (norm_short.cuh): template arguments from the row length and the
// configuration, a persistent grid of the resident capacity.
#include <algorithm>
#include <type_traits>

#include "common/launch.h"
#include "norm/norm_short.cuh"
#include "norm/norm_short_onepack.cuh"
#include "norm/norm_short_packed.cuh"
#include "norm/norm_short.h"

namespace jk::norm {
namespace {

template <typename T, Kind K, int C, int W, int R, bool kPrefetch, bool kLean>
cudaError_t Launch(const Params<T>& p, cudaStream_t stream, int max_ctas_per_sm) {
  constexpr int P = kVec16<T>;
  auto* kernel = GroupPerRowPersistent<T, K, P, C, W, R, kPrefetch, kLean>;
  static int resident[kOccupancyCacheDevices] = {};
  int per_sm = CachedCtasPerSm(reinterpret_cast<const void*>(kernel), kShortThreads, resident);
  if (per_sm < 1) return cudaErrorInvalidConfiguration;
  if (max_ctas_per_sm > 0) per_sm = std::min(per_sm, max_ctas_per_sm);
  const int64_t rows_per_cta = int64_t{kShortThreads / W} * R;
  const int64_t blocks = std::min<int64_t>(int64_t{NumSMs()} * per_sm, CeilDiv(p.outer, rows_per_cta));
  kernel<<<static_cast<unsigned>(blocks), kShortThreads, 0, stream>>>(p);
  return LastLaunchError();
}

template <typename T, Kind K, int C, int W, bool kLean>
cudaError_t WithRows(const Params<T>& p, cudaStream_t stream, const ShortConfig& cfg) {
  const int m = cfg.max_ctas_per_sm;
  switch (cfg.rows_per_group * 2 + (cfg.prefetch ? 1 : 0)) {
    case 2: return Launch<T, K, C, W, 1, false, kLean>(p, stream, m);
    case 3: return Launch<T, K, C, W, 1, true, kLean>(p, stream, m);
    case 4: return Launch<T, K, C, W, 2, false, kLean>(p, stream, m);
    case 5: return Launch<T, K, C, W, 2, true, kLean>(p, stream, m);
    case 8:  // 4 rows of C > 1 packs would double the registers of 2: those take 2 (lean: no R = 4)
      if constexpr (C == 1 && !kLean) return Launch<T, K, C, W, 4, false, false>(p, stream, m);
      else return Launch<T, K, C, W, 2, false, kLean>(p, stream, m);
    default: return cudaErrorInvalidValue;
  }
}

template <typename T, Kind K, int C, int W>
cudaError_t WithIndex(const Params<T>& p, cudaStream_t stream, const ShortConfig& cfg) {
  // 32-bit offsets need every element offset, and a row index one step past the end, below 2^31.
  if (cfg.lean && p.outer * p.n < (int64_t{1} << 30)) return WithRows<T, K, C, W, true>(p, stream, cfg);
  return WithRows<T, K, C, W, false>(p, stream, cfg);
}

// C packs per lane over rows of Packs packs: W = Packs / C lanes per row, where that is exact and a power of
// two up to a warp (else cudaErrorNotSupported, nothing instantiated). One thread per W-lane slot of every
// row, or a grid-stride loop beyond 16 CTAs per SM.
template <typename T, Kind K, int Packs, int C, int R = 1>
cudaError_t LaunchExact(const Params<T>& p, cudaStream_t stream) {
  constexpr int W = Packs / C;
  constexpr bool kFits = Packs % C == 0 && W >= 1 && W <= 32 && (W & (W - 1)) == 0;  // W in {1, 2, 4, ..., 32}
  if constexpr (!kFits) {
    return cudaErrorNotSupported;
  } else {
    const int64_t blocks =
        std::min<int64_t>(CeilDiv(p.outer * W, int64_t{kPackedThreads} * R), int64_t{NumSMs()} * 16);
    ShortRowsPacked<T, K, W, C, R><<<static_cast<unsigned>(blocks), kPackedThreads, 0, stream>>>(p);
    return LastLaunchError();
  }
}
// R rows a lane group: 1 for any C; for rows of at most 32 packs (16-bit 256, float32 128 columns) also 2 (C <= 4),
// 4 (C <= 2) and 8 (C = 1), the combinations with at most 8 packs a lane in flight. C = 1 with one row is not built
// (it lost: the launcher's PackedDefault). Anything else: cudaErrorNotSupported.
template <typename T, Kind K, int Packs, int C>
cudaError_t LaunchRows(const Params<T>& p, cudaStream_t stream, int rows) {
  if (rows <= 1) {
    if constexpr (C == 1) return cudaErrorNotSupported;
    else return LaunchExact<T, K, Packs, C>(p, stream);
  }
  if constexpr (Packs <= 32 && C <= 4) {
    if (rows == 2) return LaunchExact<T, K, Packs, C, 2>(p, stream);
    if constexpr (C <= 2) {
      if (rows == 4) return LaunchExact<T, K, Packs, C, 4>(p, stream);
    }
    if constexpr (C == 1) {
      if (rows == 8) return LaunchExact<T, K, Packs, C, 8>(p, stream);
    }
  }
  return cudaErrorNotSupported;
}

template <typename T, Kind K, int Packs>
cudaError_t PackedWithLanes(const Params<T>& p, cudaStream_t stream, const PackedConfig& cfg) {
  switch (cfg.packs_per_lane) {
    case 1: return LaunchRows<T, K, Packs, 1>(p, stream, cfg.rows_per_group);
    case 2: return LaunchRows<T, K, Packs, 2>(p, stream, cfg.rows_per_group);
    case 3: return LaunchRows<T, K, Packs, 3>(p, stream, cfg.rows_per_group);
    case 4: return LaunchRows<T, K, Packs, 4>(p, stream, cfg.rows_per_group);
    case 5: return LaunchRows<T, K, Packs, 5>(p, stream, cfg.rows_per_group);
    case 7: return LaunchRows<T, K, Packs, 7>(p, stream, cfg.rows_per_group);
    case 6: return LaunchRows<T, K, Packs, 6>(p, stream, cfg.rows_per_group);
    case 8: return LaunchRows<T, K, Packs, 8>(p, stream, cfg.rows_per_group);
    default: return cudaErrorNotSupported;
  }
}

}  // namespace

// What the packed and one-pack tiers need: contiguous rows, one parameter row for every row, and 32-bit offsets (row *
// n stays below 2^31 up to the packed grid's last step past the end, < 2^20 rows).
template <typename T>
bool PackedRowsFit(const Params<T>& p) {
  const bool one_param_row = p.scale_rows_per_group >= p.outer && p.bias_rows_per_group >= p.outer;
  return p.inner == 1 && one_param_row && p.outer * p.n < (int64_t{1} << 30);
}

template <typename T, Kind K>
cudaError_t LaunchShortRowsPacked(const Params<T>& p, cudaStream_t stream, const PackedConfig& cfg) {
  if (!PackedRowsFit(p)) return cudaErrorNotSupported;
  // Rows of 4 .. 256 16-byte packs, of 6 / 12 / 24 / 48 / 96 / 192 (3 or 6 packs per lane), and of 10 / 20 / 40 and
  // 14 / 28 / 56 (5 or 7 packs per lane); lanes per row = packs / packs per lane, a power of two up to a warp.
  switch (p.n * static_cast<int64_t>(sizeof(T))) {
    case 160: return PackedWithLanes<T, K, 10>(p, stream, cfg);    // bf16/f16 80, float32 40
    case 320: return PackedWithLanes<T, K, 20>(p, stream, cfg);    // bf16/f16 160, float32 80
    case 640: return PackedWithLanes<T, K, 40>(p, stream, cfg);    // bf16/f16 320, float32 160
    case 224: return PackedWithLanes<T, K, 14>(p, stream, cfg);    // bf16/f16 112, float32 56
    case 448: return PackedWithLanes<T, K, 28>(p, stream, cfg);    // bf16/f16 224, float32 112
    case 896: return PackedWithLanes<T, K, 56>(p, stream, cfg);    // bf16/f16 448, float32 224
    case 96: return PackedWithLanes<T, K, 6>(p, stream, cfg);      // bf16/f16 48, float32 24
    case 192: return PackedWithLanes<T, K, 12>(p, stream, cfg);    // bf16/f16 96, float32 48
    case 64: return PackedWithLanes<T, K, 4>(p, stream, cfg);
    case 128: return PackedWithLanes<T, K, 8>(p, stream, cfg);
    case 256: return PackedWithLanes<T, K, 16>(p, stream, cfg);
    case 512: return PackedWithLanes<T, K, 32>(p, stream, cfg);
    case 1024: return PackedWithLanes<T, K, 64>(p, stream, cfg);
    case 2048: return PackedWithLanes<T, K, 128>(p, stream, cfg);
    case 4096: return PackedWithLanes<T, K, 256>(p, stream, cfg);
    case 384: return PackedWithLanes<T, K, 24>(p, stream, cfg);    // bf16/f16 192, float32 96
    case 768: return PackedWithLanes<T, K, 48>(p, stream, cfg);    // bf16/f16 384, float32 192
    case 1536: return PackedWithLanes<T, K, 96>(p, stream, cfg);   // bf16/f16 768, float32 384
    case 3072: return PackedWithLanes<T, K, 192>(p, stream, cfg);  // bf16/f16 1536, float32 768
    default: return cudaErrorNotSupported;
  }
}

// kPlainOnly: only whole CTAs without statistics (LayerNorm's 16-bit 128-column layout at 80 registers: its ragged and
// statistics instantiations spilled 12-116 bytes; those rows take the tiers below).
template <typename T, Kind K, typename L, bool kPlainOnly = false>
cudaError_t LaunchOnePack(const Params<T>& p, cudaStream_t stream) {
  // Fewer rows than a CTA: the tiers below (the ragged grid moves its last CTA back by up to kRowsPerCta - 1 rows).
  if (p.outer < L::kRowsPerCta) return cudaErrorNotSupported;
  const auto blocks = static_cast<unsigned>(CeilDiv(p.outer, int64_t{L::kRowsPerCta}));
  const bool ragged = p.outer % L::kRowsPerCta != 0, stats = K == Kind::kLayerNorm && p.mean != nullptr;
  auto launch = [&](auto onepack_kernel) {
    onepack_kernel<<<blocks, L::kThreads, 0, stream>>>(p);
    return LastLaunchError();
  };
  if constexpr (kPlainOnly) {
    if (ragged || stats) return cudaErrorNotSupported;
    return launch(ShortRowsOnePack<T, K, L, false, false>);
  } else {
    if (stats) return ragged ? launch(ShortRowsOnePack<T, K, L, true, true>) : launch(ShortRowsOnePack<T, K, L, false, true>);
    return ragged ? launch(ShortRowsOnePack<T, K, L, true, false>) : launch(ShortRowsOnePack<T, K, L, false, false>);
  }
}

template <typename T, Kind K>
cudaError_t LaunchShortRowsOnePack(const Params<T>& p, cudaStream_t stream) {
  if (!PackedRowsFit(p)) return cudaErrorNotSupported;
  switch (p.n * static_cast<int64_t>(sizeof(T))) {
    case 64:  // bf16/f16 32 columns (float32 16): XLA's 128 threads x 4 lanes x 2 rows, scale / bias loaded first
              // (float32 16 since session 42: LayerNorm 2.05 on the packed tier -> 1.86 us, jnp 1.98; RMSNorm 1.98 ->
              // 1.82, jnp 2.02)
      return LaunchOnePack<T, K, OnePackLayout<4, 2, 128, 1, true>>(p, stream);
    case 128:  // float32 32 columns (bf16/f16 64): 128 threads x 8 lanes x 2 rows (XLA's Triton kernel takes 4 rows;
               // at 2, 1536 CTAs, bench/lab/s42_h200.md calls 2-4, us: LayerNorm float32 32 2.82-2.85 -> 2.78, bf16 /
               // f16 64 3.30 / 3.23 -> 2.85; RMSNorm float32 32 2.72-2.75 -> 2.56-2.59, bf16 64 2.75 -> 2.62)
      return LaunchOnePack<T, K, OnePackLayout<8, 2, 128, 1, true>>(p, stream);
    case 256:
      // float32 64 columns: 128 threads x 16 lanes x 4 rows, both norms, every form (40 registers; session 42,
      // bench/lab/s42_h200.md calls 11-12, us: LayerNorm 5.63 on the packed tier -> 5.38, jnp 5.36-5.47; RMSNorm
      // 4.77 -> 4.59, jnp 4.99-5.02; the 16-bit layout below ran 5.66-5.70 / 4.64-4.66, and at 16-bit 128 columns
      // this one lost: 5.62-6.18 against 4.67-5.05).
      // bf16/f16 128 columns: 256 threads x 16 lanes x 8 rows, capped at 80 registers (3 CTAs an SM: 384 CTAs in
      // one wave). RMSNorm holds its rows as loaded words (kHold, 64-71 registers, every form: 5.28-5.47 -> 4.66-4.67
      // us, bench/lab/s41_h200.md call 2); LayerNorm keeps the floats (held words 5.44-5.82 against 4.94-5.01), scale
      // / bias loaded after the statistics, whole CTAs without statistics only (the rest spill: the packed tier,
      // bench/lab/s40_h200.md call 9)
      if constexpr (sizeof(T) == 4) return LaunchOnePack<T, K, OnePackLayout<16, 4, 128, 1, true>>(p, stream);
      else if constexpr (K == Kind::kRmsNorm) return LaunchOnePack<T, K, OnePackLayout<16, 8, 256, 3, true, true>>(p, stream);
      else return LaunchOnePack<T, K, OnePackLayout<16, 8, 256, 3, false>, true>(p, stream);
    default:
      return cudaErrorNotSupported;
  }
}

template <typename T, Kind K>
cudaError_t LaunchShortRows(const Params<T>& p, cudaStream_t stream, const ShortConfig& cfg) {
  const int64_t packs = p.n / kVec16<T>;
  if (!ShortRowsFit(packs)) return cudaErrorInvalidValue;
  if (packs <= 4) return WithIndex<T, K, 1, 4>(p, stream, cfg);
  if (packs <= 8) return WithIndex<T, K, 1, 8>(p, stream, cfg);
  if (packs <= 16) return WithIndex<T, K, 1, 16>(p, stream, cfg);
  if (packs <= 32) return WithIndex<T, K, 1, 32>(p, stream, cfg);
  if (packs <= 64) return WithIndex<T, K, 2, 32>(p, stream, cfg);
  return WithIndex<T, K, 4, 32>(p, stream, cfg);
}

template cudaError_t LaunchShortRows<float, Kind::kLayerNorm>(const Params<float>&, cudaStream_t, const ShortConfig&);
template cudaError_t LaunchShortRows<float, Kind::kRmsNorm>(const Params<float>&, cudaStream_t, const ShortConfig&);
template cudaError_t LaunchShortRows<__nv_bfloat16, Kind::kLayerNorm>(const Params<__nv_bfloat16>&, cudaStream_t,
                                                                      const ShortConfig&);
template cudaError_t LaunchShortRows<__nv_bfloat16, Kind::kRmsNorm>(const Params<__nv_bfloat16>&, cudaStream_t,
                                                                    const ShortConfig&);
template cudaError_t LaunchShortRows<__half, Kind::kLayerNorm>(const Params<__half>&, cudaStream_t, const ShortConfig&);
template cudaError_t LaunchShortRows<__half, Kind::kRmsNorm>(const Params<__half>&, cudaStream_t, const ShortConfig&);
template cudaError_t LaunchShortRowsOnePack<float, Kind::kLayerNorm>(const Params<float>&, cudaStream_t);
template cudaError_t LaunchShortRowsOnePack<float, Kind::kRmsNorm>(const Params<float>&, cudaStream_t);
template cudaError_t LaunchShortRowsOnePack<__nv_bfloat16, Kind::kLayerNorm>(const Params<__nv_bfloat16>&, cudaStream_t);
template cudaError_t LaunchShortRowsOnePack<__nv_bfloat16, Kind::kRmsNorm>(const Params<__nv_bfloat16>&, cudaStream_t);
template cudaError_t LaunchShortRowsOnePack<__half, Kind::kLayerNorm>(const Params<__half>&, cudaStream_t);
template cudaError_t LaunchShortRowsOnePack<__half, Kind::kRmsNorm>(const Params<__half>&, cudaStream_t);
template cudaError_t LaunchShortRowsPacked<float, Kind::kLayerNorm>(const Params<float>&, cudaStream_t, const PackedConfig&);
template cudaError_t LaunchShortRowsPacked<float, Kind::kRmsNorm>(const Params<float>&, cudaStream_t, const PackedConfig&);
template cudaError_t LaunchShortRowsPacked<__nv_bfloat16, Kind::kLayerNorm>(const Params<__nv_bfloat16>&, cudaStream_t,
                                                                            const PackedConfig&);
template cudaError_t LaunchShortRowsPacked<__nv_bfloat16, Kind::kRmsNorm>(const Params<__nv_bfloat16>&, cudaStream_t,
                                                                          const PackedConfig&);
template cudaError_t LaunchShortRowsPacked<__half, Kind::kLayerNorm>(const Params<__half>&, cudaStream_t,
                                                                     const PackedConfig&);
template cudaError_t LaunchShortRowsPacked<__half, Kind::kRmsNorm>(const Params<__half>&, cudaStream_t,
                                                                   const PackedConfig&);

}  // namespace jk::norm
