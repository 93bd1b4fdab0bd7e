// One-pack lanes (LayerNorm / RMSNorm over bf16/f16 rows of 32 columns: 4 packs of 16 bytes): a CTA of 128 threads
// covers 64 rows, 4 lanes a row with one pack each, 2 rows a thread 32 rows apart, no loop; the row count is the only
// runtime shape (each row checked). The layout of XLA's Triton fusion for these rows (bench/lab/s39_xla_ptx/
// ln_bf16_32.ptx). Device code only; the launcher is norm_short.cu (LaunchShortRowsOnePack).
//
// Why: these kernels are one wave of ~2 us over L2-resident data (49152 x 32: 3 MB each way), bound by the chain of
// latencies in front of each row's first load and between its two reductions, not by bandwidth. The packed tier
// (norm_short_packed.cuh: 2 lanes a row with 2 packs each, a grid-stride loop, the row shift) ran them at 2.27-2.29
// us against jnp's 2.08-2.14. This layout, compiled from CUDA (bench/lab/s39_norm_ptx_lab.cu) and launched in the
// benchmark's conditions, ran 2.05 us with scale and bias loaded after the statistics (as Triton does) and 1.98 with
// them loaded beside x (this kernel); a row check per row cost nothing; 4 rows a thread lost (2.11-2.15). H200,
// CUPTI best of 5, bench/lab/s39_h200.md call 9.
//
// Statistics: LayerNorm takes two exact passes over the register-resident row without the row shift (RowShift):
// a row's 32 values of at most 11 significant bits sum without rounding in float32 whenever they share an exponent
// range narrow enough for |mean| >> std (the case the shift guards), so the mean keeps float32 accuracy there (as on
// the cluster tier's 16-bit rows, norm_cluster.cuh); tests/test_norms.py's large-mean 16-bit rows check it.
#pragma once
#include <type_traits>


#include "norm/norm_short_packed.cuh"  // UnpackWord, PackWord, LoadWords, Word, OnesRow, kZeros

namespace jk::norm {

constexpr int kOnePackThreads = 128;
constexpr int kOnePackRowsPerCta = 64;  // 32 rows of 4 lanes, twice

// kStats: mean / rstd written (LayerNorm with return_stats); kParams: scale (and LayerNorm's bias) present, read
// directly, else through the rows of ones / zeros. The launcher picks the instantiation, so the common call (both
// parameters, no statistics) carries neither branch (call 12 of the lab: the statistics' branch alone cost 0.07 us,
// the null checks 0.03).
template <typename T, Kind K, bool kStats, bool kParams>
__global__ void __launch_bounds__(kOnePackThreads) ShortRowsOnePack(Params<T> p) {
  static_assert(sizeof(T) == 2, "16-bit rows of 32 columns");
  static_assert(!kStats || K == Kind::kLayerNorm, "RMSNorm returns no statistics");
  constexpr int W = 4, P = 8, N = W * P;  // lanes a row, elements a pack, row length
  const unsigned lane = threadIdx.x % W;
  const unsigned row0 = blockIdx.x * kOnePackRowsPerCta + threadIdx.x / W;  // and row0 + 32
  const unsigned rows = static_cast<unsigned>(p.outer);
  // Scale and bias first, then x (the lab's order: 1.95-1.98 us against 2.02-2.05 with them after the statistics).
  const T* const scale = kParams ? p.scale : p.scale == nullptr ? OnesRow<T>() : p.scale;
  const T* const bias = kParams ? p.bias : p.bias == nullptr ? reinterpret_cast<const T*>(kZeros.w) : p.bias;
  const uint4 g = __ldg(reinterpret_cast<const uint4*>(scale) + lane);
  const uint4 b = K == Kind::kLayerNorm ? __ldg(reinterpret_cast<const uint4*>(bias) + lane) : make_uint4(0, 0, 0, 0);
  uint4 u[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const unsigned row = row0 + 32 * r;
    u[r] = row < rows ? __ldg(reinterpret_cast<const uint4*>(p.x + row * N) + lane) : make_uint4(0, 0, 0, 0);
  }
  float f[2][P], mean[2], rstd[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
#pragma unroll
    for (int w = 0; w < 4; ++w) UnpackWord<T>(Word(u[r], w), f[r] + 2 * w);
  }
  constexpr float kInvN = 1.f / N;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    mean[r] = 0.f;
    if constexpr (K == Kind::kLayerNorm) {
      const float s = ((f[r][0] + f[r][1]) + (f[r][2] + f[r][3])) + ((f[r][4] + f[r][5]) + (f[r][6] + f[r][7]));
      mean[r] = WarpAllReduce<W>(s, SumOp()) * kInvN;
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sq = 0.f;
#pragma unroll
    for (int i = 0; i < P; ++i) {
      if (K == Kind::kLayerNorm) f[r][i] -= mean[r];
      sq += f[r][i] * f[r][i];
    }
    rstd[r] = RstdFrom(WarpAllReduce<W>(sq, SumOp()) * kInvN, p.epsilon);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const unsigned row = row0 + 32 * r;
    if (row >= rows) continue;
    uint32_t o[4];
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      float gs[2], bs[2], v[2];
      UnpackWord<T>(Word(g, w), gs);
      UnpackWord<T>(Word(b, w), bs);
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const float xn = f[r][2 * w + i] * rstd[r];
        v[i] = K == Kind::kLayerNorm ? xn * gs[i] + bs[i] : xn * gs[i];
      }
      o[w] = PackWord<T>(v);
    }
    reinterpret_cast<uint4*>(p.y + row * N)[lane] = make_uint4(o[0], o[1], o[2], o[3]);
    if (kStats && lane == 0) {
      p.mean[row] = mean[r];
      p.rstd[row] = rstd[r];
    }
  }
}

}  // namespace jk::norm
