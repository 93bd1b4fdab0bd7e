// One-pack lanes (LayerNorm / RMSNorm over rows of 64, 128 or 256 bytes): W lanes a row with one 16-byte pack each (the
// row is W packs), R rows a thread kThreads / W rows apart, CTAs of kThreads threads and kRowsPerCta = R * kThreads / W
// rows, no loop, every CTA whole. XLA's Triton fusions use this layout at every short row (bench/lab/s39_xla_ptx:
// 16-bit 32 columns 128 threads x 4 lanes x 2 rows, float32 32 columns 128 x 8 x 4, 16-bit 128 columns 256 x 16 x 8
// at 80 registers). Device code only; the launcher is norm_short.cu (LaunchShortRowsOnePack: which layout for which
// row, and which rows it takes).
//
// Why: at 49152 rows of 32-128 columns these kernels are one wave of 2-5 us over L2-resident data, bound by the chain
// of latencies in front of each row's first load and between its two reductions, not by bandwidth. The packed tier
// (norm_short_packed.cuh: fewer lanes with several packs each, a grid-stride loop, the row shift) ran them at 0.90-0.98x
// jnp. H200, CUPTI best of 5 rotated rounds (bench/lab/s40_h200.md call 8), us, this kernel / packed tier / jnp:
//   LayerNorm bf16 32: 1.97 / 2.27 / 2.14      f16 32: 1.98 / 2.27 / 2.08     float32 32: 2.85 / 2.99 / 2.96
//   RMSNorm   bf16 32: 1.86 / 1.95 / 1.89      f16 32: 1.86 / 1.98 / 1.89     float32 32: 2.75 / 2.85 / 3.01
//   LayerNorm bf16 128: 5.10 / 5.68 / 5.50     f16 128: 4.96 / 5.52 / 5.39
// What made the difference (sessions 39-40, the lab kernels of bench/lab/s39_norm_ptx_lab.cu and
// s40_onepack_lab.cu beside XLA's own kernel launched as our custom call):
//   - addressing: each row as the thread's 64-bit base plus a compile-time offset that ptxas folds into the LDG /
//     STG. Indexed as a 32-bit (row * W + lane) widened per access, the 128-column layout held 8 address pairs at
//     once: 99-107 registers, 2 CTAs an SM, 384 CTAs in 1.45 waves, 6.2-6.3 us; this way it fits 80 registers (3 CTAs
//     an SM, one wave) without spilling: 4.91-5.02;
//   - no second body: session 39's kernel clamped each row's load to the last row, and the first form of this one
//     took a checked path for a ragged last CTA behind a uniform branch. Either cost ptxas the main path's schedule:
//     2.08-2.14 us at bf16 32, 3.14 at float32 32, 5.02 at bf16 128, against the same code without it. A ragged grid
//     here moves its last CTA back to end on the last row, and that CTA stores only the rows past its neighbour's
//     (ShortRowsOnePack's kRagged: one extra compare, a mask of the rows stored);
//   - statistics as their own instantiation (kStats), stored by one lane a row as soon as they exist.
//
// Statistics: LayerNorm takes two exact passes over the register-resident row without the row shift (RowShift): a
// 16-bit row's 32 values of at most 11 significant bits sum without rounding in float32 whenever they share an
// exponent range narrow enough for |mean| >> std (the case the shift guards), so the mean keeps float32 accuracy
// there; tests/test_norms.py's large-mean rows check it (16-bit 32 and 128 columns, float32 32: mean to 2e-7 at
// |mean| / std = 1e5, as the float32 sum's rounding allows).
#pragma once
#include "norm/norm_short_packed.cuh"  // UnpackWord, PackWord, Word, OnesRow, kZeros

namespace jk::norm {

template <int kW, int kR, int kThreadsPerCta, int kMinCtasPerSm, bool kParamsFirst>
struct OnePackLayout {
  static constexpr int W = kW, R = kR, kThreads = kThreadsPerCta, kMinBlocks = kMinCtasPerSm;
  static constexpr int kStep = kThreads / W, kRowsPerCta = kStep * R;
  static constexpr bool kEarlyParams = kParamsFirst;  // scale / bias loads issued before x's, or after the statistics
};

// A CTA's R rows a thread from `first`, kStep apart, all of them existing. Offsets are 32-bit (the launcher checks
// outer * n < 2^30): one 64-bit add makes the thread's base, each row's offset from it is a constant that ptxas folds
// into the LDG / STG. kRagged: rows below store_from are loaded and normalised but not stored (the ragged grid's last
// CTA, moved back over rows its neighbour stores: ShortRowsOnePack).
template <typename T, Kind K, typename L, bool kRagged, bool kStats>
__device__ __forceinline__ void OnePackRows(const Params<T>& p, unsigned first, unsigned lane, unsigned store_from) {
  constexpr int P = 16 / static_cast<int>(sizeof(T)), N = L::W * P, R = L::R;
  const T* const scale = p.scale == nullptr ? OnesRow<T>() : p.scale;
  const T* const bias = p.bias == nullptr ? reinterpret_cast<const T*>(kZeros.w) : p.bias;
  uint4 g = make_uint4(0, 0, 0, 0), b = g;
  auto load_params = [&] {
    g = __ldg(reinterpret_cast<const uint4*>(scale) + lane);
    if (K == Kind::kLayerNorm) b = __ldg(reinterpret_cast<const uint4*>(bias) + lane);
  };
  if (L::kEarlyParams) load_params();
  // Rows stored: all, or (ragged) those from store_from on, as a mask of k computed once.
  unsigned stored = ~0u;
  if (kRagged) {
#pragma unroll
    for (int k = 0; k < R; ++k) stored ^= first + k * L::kStep < store_from ? 1u << k : 0u;
  }
  auto Stored = [&](int k) { return !kRagged || ((stored >> k) & 1u) != 0; };
  const unsigned offset = first * N + lane * P;  // row k of this thread: offset + k * kStep * N
  uint4 u[R];
#pragma unroll
  for (int k = 0; k < R; ++k) u[k] = __ldg(reinterpret_cast<const uint4*>(p.x + offset) + k * L::kStep * L::W);
  constexpr float kInvN = 1.f / N;
  float f[R][P], mean[R], rstd[R];
#pragma unroll
  for (int k = 0; k < R; ++k) {
#pragma unroll
    for (int w = 0; w < 4; ++w) UnpackWord<T>(Word(u[k], w), f[k] + w * kPerWord<T>);
    mean[k] = 0.f;
    if constexpr (K == Kind::kLayerNorm) {
      float s = 0.f;
#pragma unroll
      for (int i = 0; i < P; ++i) s += f[k][i];
      mean[k] = WarpAllReduce<L::W>(s, SumOp()) * kInvN;
    }
  }
#pragma unroll
  for (int k = 0; k < R; ++k) {
    float sq = 0.f;
#pragma unroll
    for (int i = 0; i < P; ++i) {
      if (K == Kind::kLayerNorm) f[k][i] -= mean[k];
      sq = fmaf(f[k][i], f[k][i], sq);
    }
    rstd[k] = RstdFrom(WarpAllReduce<L::W>(sq, SumOp()) * kInvN, p.epsilon);
    if constexpr (K == Kind::kLayerNorm && kStats) {
      // Lane k % W of the row's group stores row k's statistics as soon as they exist (the mean is dead after).
      if (lane == k % L::W && Stored(k)) {
        (p.mean + first)[k * L::kStep] = mean[k];
        (p.rstd + first)[k * L::kStep] = rstd[k];
      }
    }
  }
  if (!L::kEarlyParams) load_params();
  float gs[P], bs[P];
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    UnpackWord<T>(Word(g, w), gs + w * kPerWord<T>);
    UnpackWord<T>(Word(b, w), bs + w * kPerWord<T>);
  }
#pragma unroll
  for (int k = 0; k < R; ++k) {
    if (!Stored(k)) continue;
    float v[P];
#pragma unroll
    for (int i = 0; i < P; ++i) {
      const float xn = f[k][i] * rstd[k];
      v[i] = K == Kind::kLayerNorm ? fmaf(xn, gs[i], bs[i]) : xn * gs[i];
    }
    uint32_t o[4];
#pragma unroll
    for (int w = 0; w < 4; ++w) o[w] = PackWord<T>(v + w * kPerWord<T>);
    reinterpret_cast<uint4*>(p.y + offset)[k * L::kStep * L::W] = make_uint4(o[0], o[1], o[2], o[3]);
  }
}

// kRagged: rows not a multiple of kRowsPerCta (the launcher needs rows >= kRowsPerCta then): the last CTA moves back
// to end on the last row and stores only the rows past its predecessor's, so every CTA is whole and no load is checked
// (the header says why; calls 6-7 of bench/lab/s40_h200.md, 49152 rows, us, the package's kernel with a checked path
// for the last CTA -> the same code without it: float32 LayerNorm 32 columns 3.14 -> 2.78, bf16 32 2.08 -> 1.97,
// bf16 128 5.02 -> 4.91; that path as a never-inlined function 3.10 / 2.02 / 5.04; the move back's compare 2.94 /
// 1.98 / 4.99). kStats: LayerNorm's mean and rstd stored too.
template <typename T, Kind K, typename L, bool kRagged, bool kStats>
__global__ void __launch_bounds__(L::kThreads, L::kMinBlocks) ShortRowsOnePack(Params<T> p) {
  const unsigned lane = threadIdx.x % L::W;
  const unsigned own = blockIdx.x * L::kRowsPerCta;  // this CTA's rows: [own, own + kRowsPerCta) within the array
  const unsigned last = static_cast<unsigned>(p.outer) - L::kRowsPerCta;  // the last whole CTA's first row
  const unsigned cta_row = kRagged && own > last ? last : own;
  OnePackRows<T, K, L, kRagged, kStats>(p, cta_row + threadIdx.x / L::W, lane, own);
}

}  // namespace jk::norm
