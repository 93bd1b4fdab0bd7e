// One-pack lanes (LayerNorm / RMSNorm over bf16/f16 rows of 32 columns: 4 packs of 16 bytes): a CTA of 128 threads
// covers 64 rows, 4 lanes a row with one pack each, 2 rows a thread 32 rows apart, no loop; the row count is the only
// runtime shape (each row checked). The layout of XLA's Triton fusion for these rows (bench/lab/s39_xla_ptx/
// ln_bf16_32.ptx). Device code only; the launcher is norm_short.cu (LaunchShortRowsOnePack).
//
// Why: these kernels are one wave of ~2 us over L2-resident data (49152 x 32: 3 MB each way), bound by the chain of
// latencies in front of each row's first load and between its two reductions, not by bandwidth. The packed tier
// (norm_short_packed.cuh: 2 lanes a row with 2 packs each, a grid-stride loop, the row shift) ran them at 2.24-2.34
// us (LayerNorm) and 1.95-1.98 (RMSNorm) against jnp's 2.08-2.14 / 1.86-1.89. H200, CUPTI best of 5
// (bench/lab/s39_h200.md calls 9-13): this kernel 2.14 / 1.92 (call 11). The same layout compiled as a lab kernel
// with the shape's constants and only pointer parameters ran 1.95-2.02 (scale and bias loaded before x, no row
// checks), 2.05-2.08 with predicated loads; forms of this kernel with parameters first and predicated loads (2.27 /
// 2.02), or with the statistics and null-parameter branches made separate instantiations, were slower, so the form
// here (x first, each row's load clamped to the last row, both branches kept) is the measured best, and the
// remaining 0.1-0.15 us to the lab's form is not understood (ptxas's schedule moves these kernels by +-0.1 us).
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

template <typename T, Kind K>
__global__ void __launch_bounds__(kOnePackThreads) ShortRowsOnePack(Params<T> p) {
  static_assert(sizeof(T) == 2, "16-bit rows of 32 columns");
  constexpr int W = 4, P = 8, N = W * P;  // lanes a row, elements a pack, row length
  const unsigned lane = threadIdx.x % W;
  const unsigned row0 = blockIdx.x * kOnePackRowsPerCta + threadIdx.x / W;  // and row0 + 32
  const unsigned rows = static_cast<unsigned>(p.outer);
  // Scale and bias loaded beside x (1.98 against 2.05 us loaded after the statistics); absent ones read the rows of
  // ones / zeros (no branch in the output pass).
  const T* const scale = p.scale == nullptr ? OnesRow<T>() : p.scale;
  const T* const bias = p.bias == nullptr ? reinterpret_cast<const T*>(kZeros.w) : p.bias;
  // x first, each row clamped to the last one rather than predicated (a predicated load waited on its own reload of
  // x's address from the constant bank: ptxas sinks the parameter load under the predicate); rows past the end are
  // computed and never stored. Read-only loads (LDG.CONSTANT), as the lab kernel's.
  uint4 u[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const unsigned want = row0 + 32 * r, row = want < rows ? want : rows - 1;
    u[r] = __ldg(reinterpret_cast<const uint4*>(p.x + row * N + lane * P));
  }
  const uint4 g = __ldg(reinterpret_cast<const uint4*>(scale + lane * P));
  const uint4 b = K == Kind::kLayerNorm ? __ldg(reinterpret_cast<const uint4*>(bias + lane * P)) : make_uint4(0, 0, 0, 0);
  float f[2][P], mean[2], rstd[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
#pragma unroll
    for (int w = 0; w < 4; ++w) UnpackWord<T>(Word(u[r], w), f[r] + 2 * w);
  }
  constexpr float kInvN = 1.f / N;
  if constexpr (K == Kind::kLayerNorm) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float s = ((f[r][0] + f[r][1]) + (f[r][2] + f[r][3])) + ((f[r][4] + f[r][5]) + (f[r][6] + f[r][7]));
      mean[r] = WarpAllReduce<W>(s, SumOp()) * kInvN;
    }
  } else {
    mean[0] = mean[1] = 0.f;
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sq = 0.f;
#pragma unroll
    for (int i = 0; i < P; ++i) {
      if (K == Kind::kLayerNorm) f[r][i] -= mean[r];
      sq = fmaf(f[r][i], f[r][i], sq);
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
        v[i] = K == Kind::kLayerNorm ? fmaf(xn, gs[i], bs[i]) : xn * gs[i];
      }
      o[w] = PackWord<T>(v);
    }
    *reinterpret_cast<uint4*>(p.y + row * N + lane * P) = make_uint4(o[0], o[1], o[2], o[3]);
    if (K == Kind::kLayerNorm && lane == 0 && p.mean != nullptr) {  // RMSNorm returns no statistics
      p.mean[row] = mean[r];
      p.rstd[row] = rstd[r];
    }
  }
}

}  // namespace jk::norm
