// One-pack lanes (LayerNorm / RMSNorm over rows of 64, 128 or 256 bytes): W lanes a row with one 16-byte pack each (the
// row is W packs), R rows a thread kThreads / W rows apart, CTAs of kThreads threads and kRowsPerCta = R * kThreads / W
// rows, no loop, every CTA whole. XLA's Triton fusions use this layout at every short row (bench/lab/s39_xla_ptx:
// 16-bit 32 columns 128 threads x 4 lanes x 2 rows, float32 32 columns 128 x 8 x 4, 16-bit 128 columns 256 x 16 x 8
// at 80 registers; ours takes float32 32 and 16-bit 64 columns at 128 x 8 x 2 since session 42). Device code only;
// the launcher is norm_short.cu (LaunchShortRowsOnePack: which layout for which row, and which rows it takes).
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
//   - statistics as their own instantiation (kStats), stored by one lane a row as soon as they exist;
//   - held words (OnePackLayout's kHold; RMSNorm's 16-bit 128 columns, session 41): the thread's 8 rows kept as their
//     32 loaded words, each pass converting again by other instructions (UnpackAgain: ptxas cannot merge the two),
//     not as 64 floats. Holding the floats at 80 registers, ptxas issued 7 row loads, the 8th only once row 0 had
//     arrived, and no store before all 8 rows' rstd, so every store waited on that late load; held (64-71 registers)
//     all 8 loads issue first and stores follow the rows: 5.28-5.50 -> 4.61-4.67 us against jnp's 5.15-5.50
//     (bench/lab/s41_h200.md calls 1-2). LayerNorm's three passes held ran slower (5.44-5.82 against 4.94-5.01),
//     and so did both norms at 16-bit 32 columns (16 floats a thread; +0.04-0.20 us, call 3): they keep the floats.
//
// Statistics: LayerNorm takes two exact passes over the register-resident row. 16-bit rows go without the row shift
// (RowShift): their 32-128 values of at most 11 significant bits sum without rounding in float32 whenever they share
// an exponent range narrow enough for |mean| >> std (the case the shift guards), so the mean keeps float32 accuracy
// there. float32 rows do not (the sum of 32 values near 1e4 rounds at 0.03, the mean at 1e-3 where std is 0.1: y off
// by 1%, session 42's test_large_mean_one_pack_rows); they are shifted by their first element, which lane 0 of the
// group hands the others by one shuffle, and x - shift - mean is formed from the shifted mean, as the other tiers do.
#pragma once
#include "norm/norm_packed_block.cuh"  // UnpackAgain; through it UnpackWord, PackWord, Word, OnesRow, kZeros

namespace jk::norm {

template <int kW, int kR, int kThreadsPerCta, int kMinCtasPerSm, bool kParamsFirst, bool kHoldWords = false>
struct OnePackLayout {
  static constexpr int W = kW, R = kR, kThreads = kThreadsPerCta, kMinBlocks = kMinCtasPerSm;
  static constexpr int kStep = kThreads / W, kRowsPerCta = kStep * R;
  static constexpr bool kEarlyParams = kParamsFirst;  // scale / bias loads issued before x's, or after the statistics
  // 16-bit rows: each pass converts the loaded words again (by other instructions, UnpackAgain), so a thread holds
  // its R rows as R * 4 words rather than R * P floats (the header says why).
  static constexpr bool kHold = kHoldWords;
};

// A pack's P values as float32. kForm 0: the plain conversion; 1, 2: the same values by other instructions
// (UnpackAgain), which ptxas cannot merge with the plain one, so a pass converting again does not keep the floats of
// an earlier pass live. float32 packs are their values.
template <typename T, int kForm>
__device__ __forceinline__ void PackValues(const uint4& u, float* f) {
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    if constexpr (kForm == 0 || sizeof(T) == 4) {
      UnpackWord<T>(Word(u, w), f + w * kPerWord<T>);
    } else {
      const float2 v = UnpackAgain<T, kForm>(Word(u, w));
      f[2 * w] = v.x, f[2 * w + 1] = v.y;
    }
  }
}

// A CTA's R rows a thread from `first`, kStep apart, all of them existing. Offsets are 32-bit (the launcher checks
// outer * n < 2^30): one 64-bit add makes the thread's base, each row's offset from it is a constant that ptxas folds
// into the LDG / STG. kRagged: rows below store_from are loaded and normalised but not stored (the ragged grid's last
// CTA, moved back over rows its neighbour stores: ShortRowsOnePack).
template <typename T, Kind K, typename L, bool kRagged, bool kStats>
__device__ __forceinline__ void OnePackRows(const Params<T>& p, unsigned first, unsigned lane, unsigned store_from) {
  constexpr int P = 16 / static_cast<int>(sizeof(T)), N = L::W * P, R = L::R;
  constexpr bool kLn = K == Kind::kLayerNorm;
  // The conversion each pass uses: all plain (ptxas converts once and keeps the floats), or (kHold) a new one for
  // every pass after the first.
  constexpr int kSquares = L::kHold && kLn ? 1 : 0, kOutput = !L::kHold ? 0 : kLn ? 2 : 1;
  const T* const scale = p.scale == nullptr ? OnesRow<T>() : p.scale;
  const T* const bias = p.bias == nullptr ? reinterpret_cast<const T*>(kZeros.w) : p.bias;
  uint4 g = make_uint4(0, 0, 0, 0), b = g;
  auto load_params = [&] {
    g = __ldg(reinterpret_cast<const uint4*>(scale) + lane);
    if (kLn) b = __ldg(reinterpret_cast<const uint4*>(bias) + lane);
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
  // float32 LayerNorm: the row shifted by its first element, taken from the group's lane 0 by one shuffle (the header
  // says why); mean[k] is then the shifted row's mean.
  constexpr bool kShift = kLn && sizeof(T) == 4;
  float shift[R];
#pragma unroll
  for (int k = 0; k < R; ++k) shift[k] = kShift ? __shfl_sync(0xffffffffu, __uint_as_float(u[k].x), 0, L::W) : 0.f;
  auto Shifted = [&](float v, int k) { return kShift ? v - shift[k] : v; };
  float mean[R], rstd[R];
#pragma unroll
  for (int k = 0; k < R; ++k) {
    mean[k] = 0.f;
    if constexpr (kLn) {
      float f[P], s = 0.f;
      PackValues<T, 0>(u[k], f);
#pragma unroll
      for (int i = 0; i < P; ++i) s += Shifted(f[i], k);
      mean[k] = WarpAllReduce<L::W>(s, SumOp()) * kInvN;
    }
  }
#pragma unroll
  for (int k = 0; k < R; ++k) {
    float f[P], sq = 0.f;
    PackValues<T, kSquares>(u[k], f);
#pragma unroll
    for (int i = 0; i < P; ++i) {
      const float c = kLn ? Shifted(f[i], k) - mean[k] : f[i];
      sq = fmaf(c, c, sq);
    }
    rstd[k] = RstdFrom(WarpAllReduce<L::W>(sq, SumOp()) * kInvN, p.epsilon);
    if constexpr (kLn && kStats) {
      // Lane k % W of the row's group stores row k's statistics as soon as they exist.
      if (lane == k % L::W && Stored(k)) {
        (p.mean + first)[k * L::kStep] = kShift ? shift[k] + mean[k] : mean[k];
        (p.rstd + first)[k * L::kStep] = rstd[k];
      }
    }
  }
  if (!L::kEarlyParams) load_params();
  float gs[P], bs[P];
  PackValues<T, 0>(g, gs);
  PackValues<T, 0>(b, bs);
#pragma unroll
  for (int k = 0; k < R; ++k) {
    if (!Stored(k)) continue;
    float f[P], v[P];
    PackValues<T, kOutput>(u[k], f);
#pragma unroll
    for (int i = 0; i < P; ++i) {
      const float xn = (kLn ? Shifted(f[i], k) - mean[k] : f[i]) * rstd[k];
      v[i] = kLn ? fmaf(xn, gs[i], bs[i]) : xn * gs[i];
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
