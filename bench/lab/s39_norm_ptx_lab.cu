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
JK_LN_LAB(lnf16_tri, __half, 2, false, false)
JK_LN_LAB(lnf16_tri_early, __half, 2, true, false)
JK_LN_LAB(lnf16_tri_checked, __half, 2, false, true)
JK_LN_LAB(lnf16_tri4, __half, 4, false, false)
