// LayerNorm / RMSNorm tier kClusterRowPairs: ClusterRowsNorm's rows (norm_cluster.cuh: held in a thread-block
// cluster's registers, read from DRAM once) with both parameter rows in shared memory. Device code only; the
// launcher is norm_cluster_pairs.cu.
//
// Why: on the long rows the parameters read from L2 every row cost 2-5% (bench/lab/s19_h200.md call 3: LayerNorm
// float32 49152 x 32768 without its bias 3407 -> 3273 us; RMSNorm float32 without its scale 3526 -> 3389).
// ClusterRowsNorm runs two CTAs of 512 threads per SM and has room for one parameter row per CTA (8 packs x 512
// threads x 16 bytes = 64 KB, two CTAs per SM). Here one CTA of 1024 threads runs two independent row streams, a
// half of 512 threads each: the halves own the same columns, so one copy of scale and bias (128 KB) serves both,
// and a half that waits at its reductions leaves the SM to the other, as the second CTA did.
//
// Each half synchronises on its own named barrier (bar.sync 1 + half, 512 threads) and exchanges its row's states
// with the same half of the peer CTAs through its own ClusterExchange: the halves never wait for each other.
// Statistics as ClusterRowsNorm's lean form: Welford merges by the special-function unit, 16-bit rows unshifted
// (kUnshifted there), float32 LayerNorm rows shifted by their first element.
#pragma once
#include "norm/norm_cluster.cuh"

namespace jk::norm {

constexpr int kPairLanes = 512;  // threads per half: one row stream
constexpr int kPairPacks = 8;    // 16-byte packs per thread (<= 64 registers at 1024 threads per CTA)

// kFull: the launcher's promise that n = ranks x kPacks x kPairLanes x (16 / sizeof(T)) (no column checks).
template <typename T, Kind K, bool kFull, int kPacks = kPairPacks>
__global__ void __launch_bounds__(2 * kPairLanes, 1)  // <= 64 registers
    ClusterRowPairsNorm(Params<T> p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kP = 16 / sizeof(T), kLanes = kPairLanes;
  constexpr int kSets = K == Kind::kLayerNorm ? 2 : 1;  // parameter rows held: scale (and bias)
  extern __shared__ uint4 param_slots[];                 // [set][kPacks][kLanes]
  __shared__ float scratch[2][3 * 32];
  __shared__ ClusterExchange<float4> ex[2];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), ranks = cluster.num_blocks();
  const int half = static_cast<int>(threadIdx.x) / kLanes, t = static_cast<int>(threadIdx.x) % kLanes;
  const int64_t rows = p.outer, n = p.n;
  const int ncols = static_cast<int>(n);  // < 2^31 in this tier (the launcher checks)
  auto col_of = [&](int k) { return ((static_cast<int>(rank) * kPacks + k) * kLanes + t) * kP; };
  auto inside = [&](int k) { return kFull || col_of(k) < ncols; };
  const uint4* const mine = param_slots + t;  // this thread's slot (set, k) at mine[(set * kPacks + k) * kLanes]
  // Half h copies parameter set h (the launcher sends one row for all rows); absent ones as ones and zeros, so
  // the output pass has no branch on them.
  if (half < kSets) {
    const T* const src = half == 0 ? p.scale : p.bias;
    const uint32_t fill = half == 0 ? kOnePair<T> : 0u;
#pragma unroll
    for (int k = 0; k < kPacks; ++k)
      if (inside(k))
        param_slots[(half * kPacks + k) * kLanes + t] =
            src != nullptr ? LoadWords(src + col_of(k)) : make_uint4(fill, fill, fill, fill);
  }
  // Each ends in a cluster barrier, which also makes the parameter slots visible to the other half.
  ex[0].Init();
  ex[1].Init();
  auto params_of = [&](int k) {
    ParamWords w;
    w.g = mine[k * kLanes];
    w.b = K == Kind::kLayerNorm ? mine[(kPacks + k) * kLanes] : make_uint4(0, 0, 0, 0);
    return w;
  };
  auto row_state = [&](Welford w, int parity, uint32_t use) {
    w = GroupAllReduceWelford<true, true>(w, scratch[half], t, kLanes / 32, [half] { NamedBarrier(1 + half, kPairLanes); });
    return ExchangeMerge<true>(w, ex[half], parity, use, t == 0, rank, ranks);
  };
  const float inv_n = 1.f / static_cast<float>(n);
  const int64_t step = int64_t{gridDim.x / ranks} * 2;
  uint32_t it = 0;  // this half's rows so far: slot set it % 2, its (it / 2)-th use
  for (int64_t row = int64_t{blockIdx.x / ranks} * 2 + half; row < rows; row += step, ++it) {
    const int parity = static_cast<int>(it & 1u);
    const uint32_t use = it >> 1;
    const T* xr = p.x + row * n;
    T* const yr = p.y + row * n;
    float mean = 0.f, rstd;
    ThreadWelford tw;
    if constexpr (sizeof(T) == 4) {
      const float shift = RowShift<K>(p.x, row, rows, n);
      asm volatile("" : "+l"(xr));
      Pack<T, kP> v[kPacks];
      int live = 0;
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        if (inside(k)) {
          v[k] = LoadPack<T, kP>(xr + col_of(k));
          ++live;
        }
      }
      tw.w = Float32PacksState<K, true>(v, live, shift, inside);
      const Welford w = row_state(tw.w, parity, use);
      mean = K == Kind::kLayerNorm ? shift + w.mean : 0.f;
      rstd = RstdFrom(K == Kind::kLayerNorm ? w.m2 * inv_n : w.m2 * inv_n + w.mean * w.mean, p.epsilon);
#pragma unroll
      for (int k = 0; k < kPacks; ++k)
        if (inside(k))
          StorePack<T, kP>(yr + col_of(k),
                           NormalizeWords<K, T, kP>(v[k], mean, rstd, params_of(k), true, K == Kind::kLayerNorm));
    } else {
      // 16-bit rows unshifted, the row pointer opaque per row: ClusterRowsNorm's kUnshifted says why.
      asm volatile("" : "+l"(xr));
      uint4 raw[kPacks];
      int live = 0;
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        raw[k] = inside(k) ? LoadWords(xr + col_of(k)) : make_uint4(0, 0, 0, 0);
        live += inside(k);
      }
      float s0 = 0.f, s1 = 0.f;  // LayerNorm: the sums; RMSNorm: the sums of squares (padding packs add zeros)
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
#pragma unroll
        for (int w = 0; w < 4; ++w) {
          const float2 f = UnpackPinned<T>(Word(raw[k], w));
          if constexpr (K == Kind::kRmsNorm) {
            s0 = fmaf(f.x, f.x, s0);
            s1 = fmaf(f.y, f.y, s1);
          } else {
            s0 += f.x;
            s1 += f.y;
          }
        }
      }
      if constexpr (K == Kind::kRmsNorm) {
        tw.w = SquaresState(static_cast<float>(live * kP), s0 + s1);
      } else {
        tw.Begin<true>(static_cast<float>(live * kP), s0 + s1);
#pragma unroll
        for (int k = 0; k < kPacks; ++k) {
          if (!inside(k)) continue;
#pragma unroll
          for (int w = 0; w < 4; ++w) {
            const float2 f = UnpackAgain<T, 1>(Word(raw[k], w));
            tw.Add(f.x);
            tw.Add(f.y);
          }
        }
      }
      const Welford w = row_state(tw.w, parity, use);
      mean = K == Kind::kLayerNorm ? w.mean : 0.f;
      rstd = RstdFrom(K == Kind::kLayerNorm ? w.m2 * inv_n : w.m2 * inv_n + w.mean * w.mean, p.epsilon);
#pragma unroll
      for (int k = 0; k < kPacks; ++k) {
        if (!inside(k)) continue;
        const ParamWords pw = params_of(k);
        StorePackedNormalizedGB<T, K>(yr, raw[k], pw.g, pw.b, col_of(k), mean, rstd);
      }
    }
    if (rank == 0 && t == 0 && p.mean != nullptr) {
      p.mean[row] = mean;
      p.rstd[row] = rstd;
    }
  }
  cluster.sync();  // shared memory must outlive the peers' last reads
#endif
}

}  // namespace jk::norm
