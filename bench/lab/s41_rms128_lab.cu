// Session 41 lab: RMSNorm over 16-bit rows of 128 columns (49152 rows), the last point of issue 3's sweep under 1.0x
// jnp (0.957-0.994x in session 40). The package's kernel there (the one-pack lanes, 256 threads x 16 lanes x 8 rows,
// 80 registers; bench/lab/s40_onepack_lab.cu's op_rms*_128_late) runs 5.34-5.63 us where LayerNorm on the same layout
// runs 4.96-5.10 with more work. Their SASS differ in schedule: RMSNorm issues 7 row loads at once, the 8th only after
// row 0 arrives, and no store before all 8 rows' rstd (so every store waits on the late 8th load); LayerNorm staggers
// its loads (4, then one per row consumed) and stores row 0 right after its rstd. Variants here, same layout and grid
// (384 CTAs), launched by bench/lab/s39_xla_ptx_lab.py (S41_RMS=1) with the lab's RMSNorm parameters:
//   stream:      scale first; each row loaded up front, then reduced, normalised and stored in turn (source order);
//   hold:        rows held as loaded words (32 registers, not 64 floats), converted again for the output (by other
//                instructions, so ptxas does not merge the two conversions and keep the floats); scale first;
//   hold_late:   the same, scale after the statistics;
//   hold_stream: held words, each row reduced, normalised and stored in turn;
//   hold64:      hold capped at 64 registers (4 CTAs an SM);
//   pipe:        rows 4-7 loaded only after rows 0-3 are reduced (a dependence ptxas keeps), rows 0-3 stored first.
//   nvcc -ptx -arch=sm_90a -O3 -std=c++17 --expt-relaxed-constexpr -Icuda bench/lab/s41_rms128_lab.cu -o .dev/s41_rms.ptx
#include "norm/norm_short_onepack.cuh"  // PackValues, and through it PackWord / WarpAllReduce / RstdFrom

namespace {
using jk::norm::PackValues;
using jk::norm::PackWord;
using jk::norm::RstdFrom;
using jk::SumOp;

constexpr int W = 16, R = 8, kThreads = 256, kStep = kThreads / W, kRowsPerCta = kStep * R;

enum Form { kStream, kHold, kHoldLate, kHoldStream, kPipe };

// A pack's 8 values: Unpack8 the plain conversion, Unpack8Again by other instructions (the package's PackValues forms
// 0 and 1, which this lab's "hold" became in session 41's call 2).
template <typename T>
__device__ __forceinline__ void Unpack8(const uint4& u, float* f) { PackValues<T, 0>(u, f); }
template <typename T>
__device__ __forceinline__ void Unpack8Again(const uint4& u, float* f) { PackValues<T, 1>(u, f); }
template <typename T>
__device__ __forceinline__ float SumSq(const uint4& u) {
  float f[8], s = 0.f;
  Unpack8<T>(u, f);
#pragma unroll
  for (int i = 0; i < 8; ++i) s = fmaf(f[i], f[i], s);
  return jk::WarpAllReduce<W>(s, SumOp());
}
template <typename T>
__device__ __forceinline__ uint4 Normalised(const float* f, const float* g, float rstd) {
  float v[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = f[i] * rstd * g[i];
  return make_uint4(PackWord<T>(v), PackWord<T>(v + 2), PackWord<T>(v + 4), PackWord<T>(v + 6));
}

template <typename T, Form F>
__device__ __forceinline__ void Rms(const T* x, const T* s, T* y, float eps) {
  const unsigned lane = threadIdx.x % W;
  const unsigned first = blockIdx.x * kRowsPerCta + threadIdx.x / W;
  const unsigned offset = first * (W * 8) + lane * 8;
  const uint4* xs = reinterpret_cast<const uint4*>(x + offset);
  uint4* ys = reinterpret_cast<uint4*>(y + offset);
  constexpr int kRowWords = kStep * W;  // uint4 words from one of the thread's rows to the next
  constexpr float kInvN = 1.f / (W * 8);
  uint4 gw = make_uint4(0, 0, 0, 0);
  float g[8];
  const bool early = F != kHoldLate;
  if (early) gw = __ldg(reinterpret_cast<const uint4*>(s) + lane);
  uint4 u[R];
  if constexpr (F == kPipe) {
#pragma unroll
    for (int k = 0; k < 4; ++k) u[k] = __ldg(xs + k * kRowWords);
    float rstd[R];
    unsigned dep = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float ss = SumSq<T>(u[k]);
      rstd[k] = RstdFrom(ss * kInvN, eps);
      dep |= ss < 0.f ? 1u : 0u;  // 0 (a sum of squares is not negative; NaN compares false): ptxas cannot know
    }
#pragma unroll
    for (int k = 4; k < R; ++k) u[k] = __ldg(xs + k * kRowWords + dep);
    Unpack8<T>(gw, g);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      float f[8];
      Unpack8Again<T>(u[k], f);
      ys[k * kRowWords] = Normalised<T>(f, g, rstd[k]);
    }
#pragma unroll
    for (int k = 4; k < R; ++k) {
      const float r = RstdFrom(SumSq<T>(u[k]) * kInvN, eps);
      float f[8];
      Unpack8Again<T>(u[k], f);
      ys[k * kRowWords] = Normalised<T>(f, g, r);
    }
    return;
  } else {
#pragma unroll
    for (int k = 0; k < R; ++k) u[k] = __ldg(xs + k * kRowWords);
  }
  if constexpr (F == kStream || F == kHoldStream) {
    Unpack8<T>(gw, g);
#pragma unroll
    for (int k = 0; k < R; ++k) {
      float f[8], sq = 0.f;
      Unpack8<T>(u[k], f);
#pragma unroll
      for (int i = 0; i < 8; ++i) sq = fmaf(f[i], f[i], sq);
      const float r = RstdFrom(jk::WarpAllReduce<W>(sq, SumOp()) * kInvN, eps);
      if (F == kHoldStream) Unpack8Again<T>(u[k], f);
      ys[k * kRowWords] = Normalised<T>(f, g, r);
    }
  } else if constexpr (F != kPipe) {  // kHold, kHoldLate: all rows' statistics, then all rows' outputs
    float rstd[R];
#pragma unroll
    for (int k = 0; k < R; ++k) rstd[k] = RstdFrom(SumSq<T>(u[k]) * kInvN, eps);
    if (!early) gw = __ldg(reinterpret_cast<const uint4*>(s) + lane);
    Unpack8<T>(gw, g);
#pragma unroll
    for (int k = 0; k < R; ++k) {
      float f[8];
      Unpack8Again<T>(u[k], f);
      ys[k * kRowWords] = Normalised<T>(f, g, rstd[k]);
    }
  }
}
}  // namespace

#define S41_RMS(NAME, T, F, MINB)                                                                                   \
  extern "C" __global__ void __launch_bounds__(kThreads, MINB)                                                    \
      NAME(const T* x, const T* s, T* y, uint32_t rows, uint32_t eps_bits) {                                      \
    Rms<T, F>(x, s, y, __uint_as_float(eps_bits));                                                                 \
  }
#define S41_RMS_DT(D, T)                              \
  S41_RMS(rms41##D##_stream, T, kStream, 3)           \
  S41_RMS(rms41##D##_hold, T, kHold, 3)               \
  S41_RMS(rms41##D##_hold_late, T, kHoldLate, 3)      \
  S41_RMS(rms41##D##_hold_stream, T, kHoldStream, 3)  \
  S41_RMS(rms41##D##_hold64, T, kHold, 4)             \
  S41_RMS(rms41##D##_pipe, T, kPipe, 3)
S41_RMS_DT(bf16, __nv_bfloat16)
S41_RMS_DT(f16, __half)
