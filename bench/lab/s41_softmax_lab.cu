// Session 41 lab: softmax / log-softmax over short rows on the norms' one-pack lanes (norm_short_onepack.cuh: W lanes
// a row with one 16-byte pack each, R rows a thread, no loop, whole CTAs, 64-bit base + constant offsets), against the
// package's warp-rows tier (softmax_warp.cuh: a grid-stride loop, 64-bit row indices, per-pack bounds checks, a
// degenerate-row branch), which runs 16-bit 128 columns at 1.00-1.07x jnp and float32 128 at 1.00-1.01x (session 41
// call 3). Unmasked rows only; degenerate rows (all -inf, +inf, NaN) need no branch here: x - m or the sum is NaN and
// every output follows. Forms:
//   f: the floats kept from the conversion (softmax keeps exp(x - m) for the output);
//   h: held words (OnePackLayout's kHold): each pass converts again, softmax recomputes exp for the output.
// Kernels (x, y, rows), launched by bench/lab/s39_xla_ptx_lab.py (S41_SOFTMAX=1).
//   nvcc -ptx -arch=sm_90a -O3 -std=c++17 --expt-relaxed-constexpr -Icuda bench/lab/s41_softmax_lab.cu -o .dev/s41_sm.ptx
#include "norm/norm_short_onepack.cuh"
#include "softmax/softmax_common.cuh"

namespace {
using jk::norm::OnePackLayout;
using jk::norm::PackValues;
using jk::norm::PackWord;
using jk::norm::kPerWord;

template <typename T, typename L, bool kLog>
__device__ __forceinline__ void Rows(const T* x, T* y) {
  constexpr int P = 16 / static_cast<int>(sizeof(T)), N = L::W * P, R = L::R;
  constexpr int kAgain1 = L::kHold ? 1 : 0, kAgain2 = L::kHold ? 2 : 0;
  const unsigned lane = threadIdx.x % L::W;
  const unsigned first = blockIdx.x * L::kRowsPerCta + threadIdx.x / L::W;
  const unsigned offset = first * N + lane * P;
  uint4 u[R];
#pragma unroll
  for (int k = 0; k < R; ++k) u[k] = __ldg(reinterpret_cast<const uint4*>(x + offset) + k * L::kStep * L::W);
  float m[R], a[R];
#pragma unroll
  for (int k = 0; k < R; ++k) {
    float f[P];
    PackValues<T, 0>(u[k], f);
    float mk = f[0];
#pragma unroll
    for (int i = 1; i < P; ++i) mk = fmaxf(mk, f[i]);
    m[k] = jk::WarpAllReduce<L::W>(mk, jk::MaxOp());
  }
#pragma unroll
  for (int k = 0; k < R; ++k) {
    float f[P], s = 0.f;
    PackValues<T, kAgain1>(u[k], f);
#pragma unroll
    for (int i = 0; i < P; ++i) s += jk::softmax::ExpShifted(f[i], m[k]);
    s = jk::WarpAllReduce<L::W>(s, jk::SumOp());
    a[k] = kLog ? jk::softmax::Log2Approx(s) * jk::softmax::kLn2 : jk::RcpApprox(s);
  }
#pragma unroll
  for (int k = 0; k < R; ++k) {
    float f[P], v[P];
    PackValues<T, kAgain2>(u[k], f);
#pragma unroll
    for (int i = 0; i < P; ++i) v[i] = kLog ? (f[i] - m[k]) - a[k] : jk::softmax::ExpShifted(f[i], m[k]) * a[k];
    uint32_t o[4];
#pragma unroll
    for (int w = 0; w < 4; ++w) o[w] = PackWord<T>(v + w * kPerWord<T>);
    reinterpret_cast<uint4*>(y + offset)[k * L::kStep * L::W] = make_uint4(o[0], o[1], o[2], o[3]);
  }
}
}  // namespace

#define S41_SM(NAME, T, L)                                                                                 \
  extern "C" __global__ void __launch_bounds__(L::kThreads, L::kMinBlocks) sm_##NAME(const T* x, T* y, uint32_t) { \
    Rows<T, L, false>(x, y);                                                                                \
  }                                                                                                         \
  extern "C" __global__ void __launch_bounds__(L::kThreads, L::kMinBlocks) lsm_##NAME(const T* x, T* y, uint32_t) { \
    Rows<T, L, true>(x, y);                                                                                 \
  }
using H32 = OnePackLayout<4, 2, 128, 1, true>;             // 16-bit 32 columns: 64 rows a CTA, 768 CTAs
using H128f = OnePackLayout<16, 8, 256, 3, true>;          // 16-bit 128: 128 rows a CTA, 384 CTAs
using H128h = OnePackLayout<16, 8, 256, 3, true, true>;
using H128r4 = OnePackLayout<16, 4, 256, 3, true>;         // 64 rows a CTA, 768 CTAs
using F32 = OnePackLayout<8, 4, 128, 1, true>;             // float32 32: 64 rows a CTA, 768 CTAs
using F128r4 = OnePackLayout<32, 4, 256, 1, true>;         // float32 128: 32 rows a CTA, 1536 CTAs
using F128r8 = OnePackLayout<32, 8, 256, 1, true>;         // 64 rows a CTA, 768 CTAs
S41_SM(bf16_32, __nv_bfloat16, H32)
S41_SM(f16_32, __half, H32)
S41_SM(bf16_128f, __nv_bfloat16, H128f)
S41_SM(bf16_128h, __nv_bfloat16, H128h)
S41_SM(bf16_128r4, __nv_bfloat16, H128r4)
S41_SM(f16_128f, __half, H128f)
S41_SM(f16_128h, __half, H128h)
S41_SM(f16_128r4, __half, H128r4)
S41_SM(f32_32, float, F32)
S41_SM(f32_128r4, float, F128r4)
S41_SM(f32_128r8, float, F128r8)
