// Session 39 lab: LayerNorm over 16-bit rows of 32 columns in the layout of XLA's Triton fusion (bench/lab/s39_xla_ptx/
// ln_bf16_32.ptx: CTAs of 128 threads and 64 rows, 4 threads a row with one 16-byte pack each, 2 rows a thread 32 rows
// apart, two-pass float32 statistics by 2 butterfly shuffles, scale and bias loaded after the statistics), compiled to
// PTX on the CPU machine and launched through bench/lab/s39_ptx_ffi.cc beside ours and jnp's (s39_xla_ptx_lab.py).
// Parameters: x, scale, bias, y, then rows and the float bits of epsilon (32-bit integers).
//   nvcc -ptx -arch=sm_90a -O3 -std=c++17 bench/lab/s39_norm_ptx_lab.cu -o .dev/s39_norm_lab.ptx
//
// kernel                      what
// ln{bf16,f16}_tri            the layout above, no row checks (rows a multiple of 64), parameters loaded late
// ln{bf16,f16}_tri_early      the same, scale and bias loaded with x (before the statistics)
// ln{bf16,f16}_tri_checked    the same as _tri with a row check per row (any number of rows)
// ln{bf16,f16}_tri4           4 rows a thread (CTAs of 128 threads and 128 rows: half the CTAs)
// call 12 (call 9: tri_early 1.98 us, tri / tri_checked 2.05, tri4 2.11-2.15; the package's one-pack kernel 2.14 in
// call 11), steps from tri_early towards the package's kernel, bf16 only:
// lnbf16_e_clamp              tri_early with each row's load clamped to the last row and its store checked
// lnbf16_e_stats              + mean / rstd pointers (null here) and the package's branch that writes them
// lnbf16_e_sel                + scale / bias pointers that may be null (the package's rows of ones / zeros)
// lnbf16_e_wide               + the row count as a 64-bit value (the package's Params::outer)
// call 13: ln{bf16,f16}_tri_early_checked, tri_early with predicated loads and stores (tri_checked's)
// Prepared in session 39, run in session 40 (bench/lab/s40_h200.md calls 1-2): XLA's Triton layouts for the other short rows, with
// LnLanes<T, W, R, kThreads> (W lanes a row with one pack each, R rows a thread kThreads / W rows apart, parameters
// loaded before x, rows a multiple of the CTA's R * kThreads / W):
// ln{bf16,f16}_128_tri (384 x 256)   16-bit 128 columns: 16 lanes, 8 rows a thread (bench/lab/s39_xla_ptx/
//                                     ln_bf16_128.ptx: 384 CTAs of 256 threads, butterflies over 16 lanes); _tri3 the
//                                     same capped at 3 CTAs an SM (80 registers and a 56-byte spill: Triton's takes
//                                     80 without), _late with the parameters loaded after the statistics
// lnf32_32_tri (768 x 128)           float32 32 columns: 8 lanes, 4 rows a thread (Triton's 768 x 128, 16 elements
//                                     a thread; session 27's call 7)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

template <typename T>
struct Pack;  // 8 16-bit values <-> float32
template <>
struct Pack<__nv_bfloat16> {
  static __device__ __forceinline__ void Load(const uint4& v, float* f) {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      f[2 * i] = __uint_as_float(w[i] << 16);
      f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
  }
  static __device__ __forceinline__ uint4 Store(const float* f) {
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
      w[i] = *reinterpret_cast<const uint32_t*>(&h);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
};
template <>
struct Pack<float> {
  static __device__ __forceinline__ void Load(const uint4& v, float* f) {
    f[0] = __uint_as_float(v.x), f[1] = __uint_as_float(v.y), f[2] = __uint_as_float(v.z), f[3] = __uint_as_float(v.w);
  }
  static __device__ __forceinline__ uint4 Store(const float* f) {
    return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]), __float_as_uint(f[3]));
  }
};
template <>
struct Pack<__half> {
  static __device__ __forceinline__ void Load(const uint4& v, float* f) {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 p = __half22float2(*reinterpret_cast<const __half2*>(&w[i]));
      f[2 * i] = p.x, f[2 * i + 1] = p.y;
    }
  }
  static __device__ __forceinline__ uint4 Store(const float* f) {
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const __half2 h = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
      w[i] = *reinterpret_cast<const uint32_t*>(&h);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
};

// kR rows a thread (32 rows apart), 4 threads a row, CTAs of 128 threads and 32 kR rows.
template <typename T, int kR, bool kEarly, bool kChecked>
__device__ __forceinline__ void LnTri(const uint4* __restrict__ x, const uint4* __restrict__ scale,
                                      const uint4* __restrict__ bias, uint4* __restrict__ y, uint32_t rows,
                                      uint32_t eps_bits) {
  const uint32_t q = threadIdx.x % 4, r0 = blockIdx.x * (32 * kR) + threadIdx.x / 4;
  uint4 v[kR], s, b;
  if (kEarly) s = __ldg(scale + q), b = __ldg(bias + q);
#pragma unroll
  for (int k = 0; k < kR; ++k) {
    const uint32_t r = r0 + 32 * k;
    v[k] = make_uint4(0, 0, 0, 0);
    if (!kChecked || r < rows) v[k] = __ldg(x + r * 4 + q);
  }
  float f[kR][8], mean[kR], rstd[kR];
#pragma unroll
  for (int k = 0; k < kR; ++k) {
    Pack<T>::Load(v[k], f[k]);
    float sum = ((f[k][0] + f[k][1]) + (f[k][2] + f[k][3])) + ((f[k][4] + f[k][5]) + (f[k][6] + f[k][7]));
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    mean[k] = sum * (1.0f / 32);
  }
#pragma unroll
  for (int k = 0; k < kR; ++k) {
    float ss = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      f[k][i] -= mean[k];
      ss += f[k][i] * f[k][i];
    }
    ss += __shfl_xor_sync(0xffffffffu, ss, 2);
    ss += __shfl_xor_sync(0xffffffffu, ss, 1);
    rstd[k] = rsqrtf(ss * (1.0f / 32) + __uint_as_float(eps_bits));
  }
  if (!kEarly) s = __ldg(scale + q), b = __ldg(bias + q);
  float fs[8], fb[8];
  Pack<T>::Load(s, fs);
  Pack<T>::Load(b, fb);
#pragma unroll
  for (int k = 0; k < kR; ++k) {
    float o[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) o[i] = f[k][i] * rstd[k] * fs[i] + fb[i];
    const uint32_t r = r0 + 32 * k;
    if (!kChecked || r < rows) y[r * 4 + q] = Pack<T>::Store(o);
  }
}

#define JK_LN_LAB(NAME, T, R, EARLY, CHECKED)                                                                  \
  extern "C" __global__ void __launch_bounds__(128)                                                            \
      NAME(const uint4* __restrict__ x, const uint4* __restrict__ scale, const uint4* __restrict__ bias,        \
           uint4* __restrict__ y, uint32_t rows, uint32_t eps_bits) {                                           \
    LnTri<T, R, EARLY, CHECKED>(x, scale, bias, y, rows, eps_bits);                                            \
  }
JK_LN_LAB(lnbf16_tri, __nv_bfloat16, 2, false, false)
JK_LN_LAB(lnbf16_tri_early, __nv_bfloat16, 2, true, false)
JK_LN_LAB(lnbf16_tri_checked, __nv_bfloat16, 2, false, true)
JK_LN_LAB(lnbf16_tri4, __nv_bfloat16, 4, false, false)
JK_LN_LAB(lnbf16_tri_early_checked, __nv_bfloat16, 2, true, true)
JK_LN_LAB(lnf16_tri, __half, 2, false, false)
JK_LN_LAB(lnf16_tri_early, __half, 2, true, false)
JK_LN_LAB(lnf16_tri_checked, __half, 2, false, true)
JK_LN_LAB(lnf16_tri4, __half, 4, false, false)
JK_LN_LAB(lnf16_tri_early_checked, __half, 2, true, true)

// Steps towards the package's kernel (norm_short_onepack.cuh). Parameters: x, scale, bias, y, mean, rstd (the last
// two null), then rows (32-bit; kWide: two words, low first) and the float bits of epsilon.
__device__ const uint32_t kLabOnes[16] = {0x3f803f80u, 0x3f803f80u, 0x3f803f80u, 0x3f803f80u, 0x3f803f80u,
                                          0x3f803f80u, 0x3f803f80u, 0x3f803f80u, 0x3f803f80u, 0x3f803f80u,
                                          0x3f803f80u, 0x3f803f80u, 0x3f803f80u, 0x3f803f80u, 0x3f803f80u,
                                          0x3f803f80u};
__device__ const uint32_t kLabZeros[16] = {};
template <bool kStats, bool kSel>
__device__ __forceinline__ void LnSteps(const uint4* __restrict__ x, const uint4* __restrict__ scale,
                                        const uint4* __restrict__ bias, uint4* __restrict__ y, float* mean_out,
                                        float* rstd_out, uint32_t rows, uint32_t eps_bits) {
  using T = __nv_bfloat16;
  const uint32_t q = threadIdx.x % 4, r0 = blockIdx.x * 64 + threadIdx.x / 4;
  uint4 v[2];
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const uint32_t want = r0 + 32 * k, r = want < rows ? want : rows - 1;
    v[k] = __ldg(x + r * 4 + q);
  }
  const uint4* sp = kSel && scale == nullptr ? reinterpret_cast<const uint4*>(kLabOnes) : scale;
  const uint4* bp = kSel && bias == nullptr ? reinterpret_cast<const uint4*>(kLabZeros) : bias;
  const uint4 s = __ldg(sp + q), b = __ldg(bp + q);
  float f[2][8], mean[2], rstd[2];
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    Pack<T>::Load(v[k], f[k]);
    float sum = ((f[k][0] + f[k][1]) + (f[k][2] + f[k][3])) + ((f[k][4] + f[k][5]) + (f[k][6] + f[k][7]));
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    mean[k] = sum * (1.0f / 32);
  }
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    float ss = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      f[k][i] -= mean[k];
      ss = fmaf(f[k][i], f[k][i], ss);
    }
    ss += __shfl_xor_sync(0xffffffffu, ss, 2);
    ss += __shfl_xor_sync(0xffffffffu, ss, 1);
    rstd[k] = rsqrtf(ss * (1.0f / 32) + __uint_as_float(eps_bits));
  }
  float fs[8], fb[8];
  Pack<T>::Load(s, fs);
  Pack<T>::Load(b, fb);
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const uint32_t r = r0 + 32 * k;
    if (r >= rows) continue;
    float o[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) o[i] = fmaf(f[k][i] * rstd[k], fs[i], fb[i]);
    y[r * 4 + q] = Pack<T>::Store(o);
    if (kStats && q == 0 && mean_out != nullptr) {
      mean_out[r] = mean[k];
      rstd_out[r] = rstd[k];
    }
  }
}
#define JK_LN_STEP(NAME, STATS, SEL)                                                                           \
  extern "C" __global__ void __launch_bounds__(128)                                                            \
      NAME(const uint4* __restrict__ x, const uint4* __restrict__ scale, const uint4* __restrict__ bias,        \
           uint4* __restrict__ y, float* mean, float* rstd, uint32_t rows, uint32_t eps_bits) {                 \
    LnSteps<STATS, SEL>(x, scale, bias, y, mean, rstd, rows, eps_bits);                                         \
  }
JK_LN_STEP(lnbf16_e_clamp, false, false)
JK_LN_STEP(lnbf16_e_stats, true, false)
JK_LN_STEP(lnbf16_e_sel, true, true)
extern "C" __global__ void __launch_bounds__(128)
    lnbf16_e_wide(const uint4* __restrict__ x, const uint4* __restrict__ scale, const uint4* __restrict__ bias,
                  uint4* __restrict__ y, float* mean, float* rstd, uint32_t rows_lo, uint32_t rows_hi,
                  uint32_t eps_bits) {
  const int64_t rows = (int64_t{rows_hi} << 32) | rows_lo;
  LnSteps<true, true>(x, scale, bias, y, mean, rstd, static_cast<uint32_t>(rows), eps_bits);
}

// W lanes a row with one 16-byte pack each (E elements), R rows a thread kThreads / W rows apart, two-pass statistics
// by butterflies over the W lanes, parameters before x, no row checks (rows a multiple of the CTA's rows).
template <typename T, int W, int R, int kThreads, bool kEarly = true>
__device__ __forceinline__ void LnLanes(const uint4* __restrict__ x, const uint4* __restrict__ scale,
                                        const uint4* __restrict__ bias, uint4* __restrict__ y, uint32_t eps_bits) {
  constexpr int E = 16 / sizeof(T), N = W * E, kStep = kThreads / W;
  const uint32_t q = threadIdx.x % W, r0 = blockIdx.x * (kStep * R) + threadIdx.x / W;
  uint4 s, b;
  if (kEarly) s = __ldg(scale + q), b = __ldg(bias + q);
  uint4 v[R];
#pragma unroll
  for (int k = 0; k < R; ++k) v[k] = __ldg(x + (r0 + kStep * k) * W + q);
  float f[R][E], mean[R], rstd[R];
#pragma unroll
  for (int k = 0; k < R; ++k) {
    Pack<T>::Load(v[k], f[k]);
    float sum = 0;
#pragma unroll
    for (int i = 0; i < E; ++i) sum += f[k][i];
#pragma unroll
    for (int m = W / 2; m > 0; m /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, m);
    mean[k] = sum * (1.0f / N);
  }
#pragma unroll
  for (int k = 0; k < R; ++k) {
    float ss = 0;
#pragma unroll
    for (int i = 0; i < E; ++i) {
      f[k][i] -= mean[k];
      ss += f[k][i] * f[k][i];
    }
#pragma unroll
    for (int m = W / 2; m > 0; m /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, m);
    rstd[k] = rsqrtf(ss * (1.0f / N) + __uint_as_float(eps_bits));
  }
  if (!kEarly) s = __ldg(scale + q), b = __ldg(bias + q);
  float fs[E], fb[E];
  Pack<T>::Load(s, fs);
  Pack<T>::Load(b, fb);
#pragma unroll
  for (int k = 0; k < R; ++k) {
    float o[E];
#pragma unroll
    for (int i = 0; i < E; ++i) o[i] = f[k][i] * rstd[k] * fs[i] + fb[i];
    y[(r0 + kStep * k) * W + q] = Pack<T>::Store(o);
  }
}
#define JK_LN_LANES(NAME, T, W, R, THREADS, MINB, EARLY)                                                       \
  extern "C" __global__ void __launch_bounds__(THREADS, MINB)                                                  \
      NAME(const uint4* __restrict__ x, const uint4* __restrict__ scale, const uint4* __restrict__ bias,        \
           uint4* __restrict__ y, uint32_t rows, uint32_t eps_bits) {                                           \
    LnLanes<T, W, R, THREADS, EARLY>(x, scale, bias, y, eps_bits);                                              \
  }
JK_LN_LANES(lnbf16_128_tri, __nv_bfloat16, 16, 8, 256, 1, true)  // ~107 registers: 2 CTAs an SM
JK_LN_LANES(lnbf16_128_tri3, __nv_bfloat16, 16, 8, 256, 3, true)  // capped for 3 CTAs an SM: spills 56 bytes
JK_LN_LANES(lnbf16_128_late, __nv_bfloat16, 16, 8, 256, 1, false)  // parameters after the statistics (Triton's order)
JK_LN_LANES(lnf16_128_tri, __half, 16, 8, 256, 1, true)
JK_LN_LANES(lnf16_128_tri3, __half, 16, 8, 256, 3, true)
JK_LN_LANES(lnf16_128_late, __half, 16, 8, 256, 1, false)
JK_LN_LANES(lnf32_32_tri, float, 8, 4, 128, 1, true)
JK_LN_LANES(lnf32_32_late, float, 8, 4, 128, 1, false)

// Session 40: the prepared layouts ran 6.2-6.3 us at 16-bit 128 columns (Triton's 5.5) with 102-107 registers (2 CTAs
// an SM: 264 slots for 384 CTAs) where Triton's takes 80 (3 an SM: one wave). LnLanesB: the same with each row's
// address a 64-bit base plus compile-time offsets (ptxas folds them into the loads and stores, as in Triton's PTX,
// instead of 8 widened 32-bit indices); kPacked keeps x packed (R x 4 words) and converts it again in each pass.
template <typename T, int W, int R, int kThreads, bool kEarly, bool kPacked>
__device__ __forceinline__ void LnLanesB(const uint4* __restrict__ x, const uint4* __restrict__ scale,
                                         const uint4* __restrict__ bias, uint4* __restrict__ y, uint32_t eps_bits) {
  constexpr int E = 16 / sizeof(T), N = W * E, kStep = kThreads / W;
  const uint32_t q = threadIdx.x % W;
  const uint64_t base = (uint64_t{blockIdx.x} * (kStep * R) + threadIdx.x / W) * W + q;
  const uint4* xr = x + base;
  uint4* yr = y + base;
  uint4 s, b;
  if (kEarly) s = __ldg(scale + q), b = __ldg(bias + q);
  uint4 v[R];
#pragma unroll
  for (int k = 0; k < R; ++k) v[k] = __ldg(xr + k * kStep * W);
  float f[kPacked ? 1 : R][E], mean[R], rstd[R];
#pragma unroll
  for (int k = 0; k < R; ++k) {
    float t[E];
    Pack<T>::Load(v[k], t);
    float sum = 0;
#pragma unroll
    for (int i = 0; i < E; ++i) sum += t[i];
#pragma unroll
    for (int m = W / 2; m > 0; m /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, m);
    mean[k] = sum * (1.0f / N);
    if (!kPacked) {
#pragma unroll
      for (int i = 0; i < E; ++i) f[k][i] = t[i];
    }
  }
#pragma unroll
  for (int k = 0; k < R; ++k) {
    float t[E], ss = 0;
    if (kPacked) Pack<T>::Load(v[k], t);
#pragma unroll
    for (int i = 0; i < E; ++i) {
      const float d = (kPacked ? t[i] : f[k][i]) - mean[k];
      if (!kPacked) f[k][i] = d;
      ss += d * d;
    }
#pragma unroll
    for (int m = W / 2; m > 0; m /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, m);
    rstd[k] = rsqrtf(ss * (1.0f / N) + __uint_as_float(eps_bits));
  }
  if (!kEarly) s = __ldg(scale + q), b = __ldg(bias + q);
  float fs[E], fb[E];
  Pack<T>::Load(s, fs);
  Pack<T>::Load(b, fb);
#pragma unroll
  for (int k = 0; k < R; ++k) {
    float t[E], o[E];
    if (kPacked) Pack<T>::Load(v[k], t);
#pragma unroll
    for (int i = 0; i < E; ++i) o[i] = (kPacked ? t[i] - mean[k] : f[k][i]) * rstd[k] * fs[i] + fb[i];
    yr[k * kStep * W] = Pack<T>::Store(o);
  }
}
#define JK_LN_LANES_B(NAME, T, W, R, THREADS, MINB, EARLY, PACKED)                                             \
  extern "C" __global__ void __launch_bounds__(THREADS, MINB)                                                  \
      NAME(const uint4* __restrict__ x, const uint4* __restrict__ scale, const uint4* __restrict__ bias,        \
           uint4* __restrict__ y, uint32_t rows, uint32_t eps_bits) {                                           \
    LnLanesB<T, W, R, THREADS, EARLY, PACKED>(x, scale, bias, y, eps_bits);                                     \
  }
JK_LN_LANES_B(lnbf16_128_b, __nv_bfloat16, 16, 8, 256, 1, true, false)
JK_LN_LANES_B(lnbf16_128_b_late, __nv_bfloat16, 16, 8, 256, 1, false, false)
JK_LN_LANES_B(lnbf16_128_pk, __nv_bfloat16, 16, 8, 256, 1, true, true)
JK_LN_LANES_B(lnbf16_128_pk_late, __nv_bfloat16, 16, 8, 256, 1, false, true)
JK_LN_LANES_B(lnbf16_128_b4, __nv_bfloat16, 16, 4, 256, 1, true, false)  // 64 rows a CTA: 768 CTAs
JK_LN_LANES_B(lnf16_128_b, __half, 16, 8, 256, 1, true, false)
JK_LN_LANES_B(lnf16_128_b_late, __half, 16, 8, 256, 1, false, false)
JK_LN_LANES_B(lnf16_128_pk, __half, 16, 8, 256, 1, true, true)
JK_LN_LANES_B(lnf16_128_b4, __half, 16, 4, 256, 1, true, false)
JK_LN_LANES_B(lnf32_32_b, float, 8, 4, 128, 1, true, false)
JK_LN_LANES_B(lnf32_32_b_late, float, 8, 4, 128, 1, false, false)
JK_LN_LANES_B(lnbf16_128_b3, __nv_bfloat16, 16, 8, 256, 3, true, false)  // capped for 3 CTAs an SM (80 registers)
JK_LN_LANES_B(lnbf16_128_b3_late, __nv_bfloat16, 16, 8, 256, 3, false, false)
JK_LN_LANES_B(lnbf16_128_pk3, __nv_bfloat16, 16, 8, 256, 3, true, true)
JK_LN_LANES_B(lnbf16_128_pk3_late, __nv_bfloat16, 16, 8, 256, 3, false, true)
JK_LN_LANES_B(lnf16_128_b3, __half, 16, 8, 256, 3, true, false)
JK_LN_LANES_B(lnf16_128_b3_late, __half, 16, 8, 256, 3, false, false)
JK_LN_LANES_B(lnf16_128_pk3, __half, 16, 8, 256, 3, true, true)
