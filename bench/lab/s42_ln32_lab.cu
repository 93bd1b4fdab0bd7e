// Session 42 lab: float32 LayerNorm at 32 columns (0.994-1.034x jnp over sessions 40-41; the package's one-pack lanes,
// 8 lanes x 4 rows x 128 threads, are the layout XLA's Triton kernel uses there, so only the code between the loads
// and the stores can differ). Kernels with the lab's parameters (x, scale, bias, y, rows, epsilon bits), launched by
// bench/lab/s39_xla_ptx_lab.py beside the package's (op_lnf32_32, s40_onepack_lab.cu), jnp and XLA's kernel:
//   - floors in the same layout: a copy (y = x) and the affine map alone (y = x * scale + bias), no statistics;
//   - one reduction (RMSNorm's statistics with LayerNorm's output), to price the second;
//   - the statistics in one pass: each lane's exact mean and M2 over its own values, then the lanes' states merged
//     pairwise (Chan et al.; equal counts, so the merge is symmetric and every lane gets the same bits): the chain is
//     log2(W) merges of two independent shuffles instead of two reductions of log2(W) shuffles each;
//   - other layouts: rows a thread (R), threads a CTA, lanes a row with several packs each (W x PK = 8).
//   nvcc -ptx -arch=sm_90a -O3 -std=c++17 --expt-relaxed-constexpr -Icuda bench/lab/s42_ln32_lab.cu -o .dev/s42_ln32.ptx
#include <cstdint>

namespace {

enum Stat { kTwoPass = 0, kChan = 1, kOneReduction = 2, kCopy = 3, kAffine = 4, kChanShift = 5, kShiftSums = 6 };

template <int W>
__device__ __forceinline__ float GroupSum(float v) {
#pragma unroll
  for (int m = W / 2; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m, W);
  return v;
}

// Every lane's (mean, M2) over c values each, merged across the group: at each level both sides hold the same count
// c, so mean = (a + b) / 2 and M2 = M2a + M2b + d^2 c / 2, both symmetric in the two sides (the same bits in each lane).
template <int W, int kPerLane>
__device__ __forceinline__ void GroupChan(float& mean, float& m2) {
  float c = kPerLane;
#pragma unroll
  for (int m = W / 2; m > 0; m /= 2) {
    const float om = __shfl_xor_sync(0xffffffffu, mean, m, W);
    const float o2 = __shfl_xor_sync(0xffffffffu, m2, m, W);
    const float d = om - mean;
    mean = (mean + om) * 0.5f;
    m2 = fmaf(d * d, 0.5f * c, m2 + o2);
    c *= 2.f;
  }
}

// W lanes a row, PK 16-byte packs a lane (lane + j * W), R rows a thread kThreads / W rows apart; rows of 32 floats.
template <int W, int PK, int R, int kThreads, int kStat>
__device__ __forceinline__ void Ln32(const float* x, const float* s, const float* b, float* y, uint32_t rows,
                                     uint32_t eps_bits) {
  static_assert(W * PK == 8, "rows of 32 floats");
  constexpr int kStep = kThreads / W, kRowsPerCta = kStep * R, kPacks = 8, kVals = 4 * PK;
  const float eps = __uint_as_float(eps_bits);
  const unsigned lane = threadIdx.x % W;
  const unsigned first = blockIdx.x * kRowsPerCta + threadIdx.x / W;
  const unsigned offset = first * kPacks + lane;  // in packs; row k of this thread: + k * kStep * kPacks
  const float4* xp = reinterpret_cast<const float4*>(x) + offset;
  float4* yp = reinterpret_cast<float4*>(y) + offset;
  float4 g[PK], bb[PK];
#pragma unroll
  for (int j = 0; j < PK; ++j) {
    g[j] = __ldg(reinterpret_cast<const float4*>(s) + lane + j * W);
    bb[j] = __ldg(reinterpret_cast<const float4*>(b) + lane + j * W);
  }
  float v[R][kVals];
#pragma unroll
  for (int k = 0; k < R; ++k) {
#pragma unroll
    for (int j = 0; j < PK; ++j) {
      const float4 u = __ldg(xp + k * kStep * kPacks + j * W);
      v[k][4 * j] = u.x, v[k][4 * j + 1] = u.y, v[k][4 * j + 2] = u.z, v[k][4 * j + 3] = u.w;
    }
  }
  float mean[R], rstd[R];
  constexpr float kInvN = 1.f / 32;
  // Call 4: the row's first element as a shift, loaded by every lane of the row (one more load beside the row's).
  float shift[R];
  if constexpr (kStat == kChanShift || kStat == kShiftSums) {
#pragma unroll
    for (int k = 0; k < R; ++k) shift[k] = __ldg(x + (first + k * kStep) * 32u);
  }
  if constexpr (kStat == kTwoPass) {
#pragma unroll
    for (int k = 0; k < R; ++k) {
      float t = 0.f;
#pragma unroll
      for (int i = 0; i < kVals; ++i) t += v[k][i];
      mean[k] = GroupSum<W>(t) * kInvN;
    }
#pragma unroll
    for (int k = 0; k < R; ++k) {
      float q = 0.f;
#pragma unroll
      for (int i = 0; i < kVals; ++i) q = fmaf(v[k][i] - mean[k], v[k][i] - mean[k], q);
      rstd[k] = rsqrtf(GroupSum<W>(q) * kInvN + eps);
    }
  } else if constexpr (kStat == kChan) {
#pragma unroll
    for (int k = 0; k < R; ++k) {
      float t = 0.f, q = 0.f;
#pragma unroll
      for (int i = 0; i < kVals; ++i) t += v[k][i];
      float m = t * (1.f / kVals);
#pragma unroll
      for (int i = 0; i < kVals; ++i) q = fmaf(v[k][i] - m, v[k][i] - m, q);
      GroupChan<W, kVals>(m, q);
      mean[k] = m;
      rstd[k] = rsqrtf(q * kInvN + eps);
    }
  } else if constexpr (kStat == kChanShift) {
#pragma unroll
    for (int k = 0; k < R; ++k) {
      float t = 0.f, q = 0.f;
#pragma unroll
      for (int i = 0; i < kVals; ++i) t += v[k][i] - shift[k];
      float m = t * (1.f / kVals);
#pragma unroll
      for (int i = 0; i < kVals; ++i) q = fmaf(v[k][i] - shift[k] - m, v[k][i] - shift[k] - m, q);
      GroupChan<W, kVals>(m, q);
      mean[k] = shift[k] + m;
      rstd[k] = rsqrtf(q * kInvN + eps);
    }
  } else if constexpr (kStat == kShiftSums) {  // sum and sum of squares of the shifted row, reduced side by side
#pragma unroll
    for (int k = 0; k < R; ++k) {
      float t = 0.f, q = 0.f;
#pragma unroll
      for (int i = 0; i < kVals; ++i) {
        const float d = v[k][i] - shift[k];
        t += d;
        q = fmaf(d, d, q);
      }
#pragma unroll
      for (int m = W / 2; m > 0; m /= 2) {
        t += __shfl_xor_sync(0xffffffffu, t, m, W);
        q += __shfl_xor_sync(0xffffffffu, q, m, W);
      }
      const float dm = t * kInvN;
      mean[k] = shift[k] + dm;
      rstd[k] = rsqrtf(fmaxf(fmaf(-dm, dm, q * kInvN), 0.f) + eps);
    }
  } else if constexpr (kStat == kOneReduction) {
#pragma unroll
    for (int k = 0; k < R; ++k) {
      float q = 0.f;
#pragma unroll
      for (int i = 0; i < kVals; ++i) q = fmaf(v[k][i], v[k][i], q);
      mean[k] = 0.f;
      rstd[k] = rsqrtf(GroupSum<W>(q) * kInvN + eps);
    }
  } else {
#pragma unroll
    for (int k = 0; k < R; ++k) mean[k] = 0.f, rstd[k] = 1.f;
  }
#pragma unroll
  for (int k = 0; k < R; ++k) {
#pragma unroll
    for (int j = 0; j < PK; ++j) {
      const float* f = v[k] + 4 * j;
      float4 o;
      if constexpr (kStat == kCopy) {
        o = make_float4(f[0], f[1], f[2], f[3]);
      } else {
        o.x = fmaf((f[0] - mean[k]) * rstd[k], g[j].x, bb[j].x);
        o.y = fmaf((f[1] - mean[k]) * rstd[k], g[j].y, bb[j].y);
        o.z = fmaf((f[2] - mean[k]) * rstd[k], g[j].z, bb[j].z);
        o.w = fmaf((f[3] - mean[k]) * rstd[k], g[j].w, bb[j].w);
      }
      yp[k * kStep * kPacks + j * W] = o;
    }
  }
}

}  // namespace

// NAME: W, PK, R, threads, statistics. Grid = 49152 / (threads / W * R).
#define S42(NAME, W, PK, R, T, STAT)                                                                            \
  extern "C" __global__ void __launch_bounds__(T, 1)                                                           \
      NAME(const float* x, const float* s, const float* b, float* y, uint32_t rows, uint32_t eps_bits) {       \
    Ln32<W, PK, R, T, STAT>(x, s, b, y, rows, eps_bits);                                                       \
  }
// The package's layout (grid 768): floors, the package's two passes, one reduction, Chan.
S42(s42_copy, 8, 1, 4, 128, kCopy)
S42(s42_affine, 8, 1, 4, 128, kAffine)
S42(s42_two, 8, 1, 4, 128, kTwoPass)
S42(s42_one, 8, 1, 4, 128, kOneReduction)
S42(s42_chan, 8, 1, 4, 128, kChan)
// Chan on other CTA shapes: R = 2 (grid 1536), R = 8 (384), 256 threads (384), 64 threads (1536).
S42(s42_chan_r2, 8, 1, 2, 128, kChan)
S42(s42_chan_r8, 8, 1, 8, 128, kChan)
S42(s42_chan_t256, 8, 1, 4, 256, kChan)
S42(s42_chan_t64, 8, 1, 4, 64, kChan)
// Fewer lanes a row, more packs a lane: 4 x 2 (R 2: grid 768; R 4: 384), 2 x 4 (R 1: 768; R 2: 384).
S42(s42_chan_w4, 4, 2, 2, 128, kChan)
S42(s42_chan_w4r4, 4, 2, 4, 128, kChan)
S42(s42_two_w4, 4, 2, 2, 128, kTwoPass)
S42(s42_chan_w2, 2, 4, 1, 128, kChan)
S42(s42_chan_w2r2, 2, 4, 2, 128, kChan)
// Call 2: the same at 2 rows a thread (grid 1536) and Chan at 1 (3072) and on 2 x 256 (768) / 2 x 64 (3072).
S42(s42_copy_r2, 8, 1, 2, 128, kCopy)
S42(s42_two_r2, 8, 1, 2, 128, kTwoPass)
S42(s42_one_r2, 8, 1, 2, 128, kOneReduction)
S42(s42_chan_r1, 8, 1, 1, 128, kChan)
S42(s42_chan_r2t256, 8, 1, 2, 256, kChan)
S42(s42_chan_r2t64, 8, 1, 2, 64, kChan)
// Call 4: Chan's merges of the row shifted by its first element, and the shifted sums side by side, at 2 and 4 rows a
// thread.
S42(s42_chanshift_r2, 8, 1, 2, 128, kChanShift)
S42(s42_chanshift, 8, 1, 4, 128, kChanShift)
S42(s42_sums_r2, 8, 1, 2, 128, kShiftSums)
S42(s42_sums, 8, 1, 4, 128, kShiftSums)
