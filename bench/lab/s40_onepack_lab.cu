// Session 40 lab: the package's one-pack lanes (cuda/norm/norm_short_onepack.cuh) behind extern "C" kernels with the
// lab's parameters (x, scale, bias, y, rows, epsilon bits), so bench/lab/s39_xla_ptx_lab.py launches the package's
// device code beside the lab kernels. Call 4: the package ran float32 LayerNorm at 32 columns in 3.04 us where the
// lab's LnLanesB took 2.78 with near-identical SASS (bf16/f16 32 columns 2.05 against 1.98). Compiled two ways:
//   nvcc -ptx -arch=sm_90a -O3 -std=c++17 --expt-relaxed-constexpr -Icuda bench/lab/s40_onepack_lab.cu -o .dev/s40_op.ptx
//   nvcc -cubin -arch=sm_90a -O3 -std=c++17 --expt-relaxed-constexpr -Icuda bench/lab/s40_onepack_lab.cu -o .dev/s40_op.cubin
// the PTX JIT-compiled by the driver at load (as the lab kernels), the cubin by nvcc's ptxas (as the package): the
// same time from both means the compile path is not the difference; lab time from both, the kernel's Params<T>
// argument (a 96-byte struct) or the launch is.
#include "norm/norm_short_onepack.cuh"

namespace {
using jk::norm::Kind;
using jk::norm::OnePackLayout;
using jk::norm::Params;

template <typename T, Kind K, typename L>
__device__ __forceinline__ void Wrapped(const T* x, const T* s, const T* b, T* y, uint32_t rows, uint32_t eps_bits) {
  Params<T> p;
  p.x = x, p.scale = s, p.bias = b, p.y = y, p.mean = nullptr, p.rstd = nullptr;
  p.outer = rows, p.n = L::W * (16 / sizeof(T)), p.inner = 1;
  p.scale_rows_per_group = p.bias_rows_per_group = rows;
  p.epsilon = __uint_as_float(eps_bits);
  // The package's kernel for whole CTAs (ShortRowsOnePack<..., kRagged = false, kStats = false>) since call 8; calls
  // 5-7 timed the forms before it (a checked path for a ragged last CTA: the records in bench/lab/s40_h200.md).
  const unsigned own = blockIdx.x * L::kRowsPerCta;
  jk::norm::OnePackRows<T, K, L, false, false>(p, own + threadIdx.x / L::W, threadIdx.x % L::W, own);
}
}  // namespace

// Calls 6-7 built variants of this file (the ragged CTA's checked path removed, as a never-inlined function, or
// replaced by moving the last CTA back; the null-parameter selects removed) as separate PTX files, each kernel named
// with a suffix; the winning form became the package's in call 8 and the variants were not kept (their times:
// bench/lab/s40_h200.md calls 6-7).
#define JK_OP_LAB(NAME, T, L)                                                                                   \
  extern "C" __global__ void __launch_bounds__(L::kThreads, L::kMinBlocks)                                     \
      NAME(const T* x, const T* s, const T* b, T* y, uint32_t rows, uint32_t eps_bits) {                        \
    Wrapped<T, Kind::kLayerNorm, L>(x, s, b, y, rows, eps_bits);                                                 \
  }
using L32h = OnePackLayout<4, 2, 128, 1, true>;
using L32f = OnePackLayout<8, 4, 128, 1, true>;
using L128h = OnePackLayout<16, 8, 256, 3, false>;
JK_OP_LAB(op_lnbf16_32, __nv_bfloat16, L32h)
JK_OP_LAB(op_lnf32_32, float, L32f)
JK_OP_LAB(op_lnbf16_128, __nv_bfloat16, L128h)
// Call 12: RMSNorm 16-bit 128 columns (0.99x jnp in call 11) with scale loaded after the statistics (the package's) or
// before x.
#define JK_OP_RMS(NAME, T, L)                                                                                   \
  extern "C" __global__ void __launch_bounds__(L::kThreads, L::kMinBlocks)                                     \
      NAME(const T* x, const T* s, T* y, uint32_t rows, uint32_t eps_bits) {                                    \
    Wrapped<T, Kind::kRmsNorm, L>(x, s, nullptr, y, rows, eps_bits);                                             \
  }
using L128hEarly = OnePackLayout<16, 8, 256, 3, true>;
JK_OP_RMS(op_rmsbf16_128_late, __nv_bfloat16, L128h)
JK_OP_RMS(op_rmsbf16_128_early, __nv_bfloat16, L128hEarly)
JK_OP_RMS(op_rmsf16_128_late, __half, L128h)
JK_OP_RMS(op_rmsf16_128_early, __half, L128hEarly)
// Session 41 call 2: the held-words form of the 128-column layout (OnePackLayout's kHold: each pass converts the loaded
// words again, bench/lab/s41_rms128_lab.cu's "hold" ran RMSNorm 4.61-4.66 us against 5.38-5.50 in call 1), for both
// norms, with the scale / bias loaded first or after the statistics.
using L128hHold = OnePackLayout<16, 8, 256, 3, true, true>;
using L128hHoldLate = OnePackLayout<16, 8, 256, 3, false, true>;
JK_OP_LAB(op_lnbf16_128_hold, __nv_bfloat16, L128hHold)
JK_OP_LAB(op_lnbf16_128_hold_late, __nv_bfloat16, L128hHoldLate)
JK_OP_LAB(op_lnf16_128, __half, L128h)
JK_OP_LAB(op_lnf16_128_hold, __half, L128hHold)
JK_OP_LAB(op_lnf16_128_hold_late, __half, L128hHoldLate)
JK_OP_RMS(op_rmsbf16_128_hold, __nv_bfloat16, L128hHold)
JK_OP_RMS(op_rmsf16_128_hold, __half, L128hHold)
// Session 41 call 3: held words at 16-bit 32 columns (4 lanes x 2 rows: 16 floats a thread, no register pressure).
using L32hHold = OnePackLayout<4, 2, 128, 1, true, true>;
JK_OP_LAB(op_lnf16_32, __half, L32h)
JK_OP_LAB(op_lnbf16_32_hold, __nv_bfloat16, L32hHold)
JK_OP_LAB(op_lnf16_32_hold, __half, L32hHold)
JK_OP_RMS(op_rmsbf16_32, __nv_bfloat16, L32h)
JK_OP_RMS(op_rmsf16_32, __half, L32h)
JK_OP_RMS(op_rmsbf16_32_hold, __nv_bfloat16, L32hHold)
JK_OP_RMS(op_rmsf16_32_hold, __half, L32hHold)
// Session 41 call 4: RMSNorm 16-bit 32 columns (1.008-1.034x jnp in call 3's benchmark): other CTA shapes of the 4-lane
// layout (R rows a thread x threads a CTA), and the scale loaded after the statistics.
using L32r1 = OnePackLayout<4, 1, 128, 1, true>;     // 32 rows a CTA, 1536 CTAs
using L32r4 = OnePackLayout<4, 4, 128, 1, true>;     // 128 rows a CTA, 384 CTAs
using L32t256 = OnePackLayout<4, 2, 256, 1, true>;   // 128 rows a CTA, 384 CTAs of 8 warps
using L32t64 = OnePackLayout<4, 2, 64, 1, true>;     // 32 rows a CTA, 1536 CTAs of 2 warps
using L32late = OnePackLayout<4, 2, 128, 1, false>;  // the package's shape, scale after the statistics
#define S41_RMS32(SUFFIX, L)                                \
  JK_OP_RMS(op_rmsbf16_32_##SUFFIX, __nv_bfloat16, L)       \
  JK_OP_RMS(op_rmsf16_32_##SUFFIX, __half, L)
S41_RMS32(r1, L32r1)
S41_RMS32(r4, L32r4)
S41_RMS32(t256, L32t256)
S41_RMS32(t64, L32t64)
S41_RMS32(late, L32late)
// Session 42 call 2: float32 LayerNorm 32 columns on other CTA shapes of the 8-lane layout (call 1: the lab's kernel at
// 2 rows a thread ran 2.75 us against 2.88-2.94 at 4, the package's 2.80-2.85, jnp 2.88-2.91).
using L32fR2 = OnePackLayout<8, 2, 128, 1, true>;      // 32 rows a CTA, 1536 CTAs
using L32fR1 = OnePackLayout<8, 1, 128, 1, true>;      // 16 rows a CTA, 3072 CTAs
using L32fR2t256 = OnePackLayout<8, 2, 256, 1, true>;  // 64 rows a CTA, 768 CTAs of 8 warps
using L32fR2t64 = OnePackLayout<8, 2, 64, 1, true>;    // 16 rows a CTA, 3072 CTAs of 2 warps
using L32fR2late = OnePackLayout<8, 2, 128, 1, false>;
JK_OP_LAB(op_lnf32_32_r2, float, L32fR2)
JK_OP_LAB(op_lnf32_32_r1, float, L32fR1)
JK_OP_LAB(op_lnf32_32_r2t256, float, L32fR2t256)
JK_OP_LAB(op_lnf32_32_r2t64, float, L32fR2t64)
JK_OP_LAB(op_lnf32_32_r2late, float, L32fR2late)
JK_OP_RMS(op_rmsf32_32, float, L32f)
JK_OP_RMS(op_rmsf32_32_r2, float, L32fR2)
// Session 42 call 3 timed the rows reduced two at a time (a pair of rows in log2(W) + 1 shuffles instead of
// 2 log2(W), every add the butterfly's) on every layout as *_p kernels: lost or tied everywhere (float32 LayerNorm 32
// 2.82 -> 3.10 us, at 2 rows a thread 2.78 -> 3.04: ptxas issued the scale / bias loads after x's had arrived);
// bench/lab/s42_h200.md. The layout option was removed.
// Call 4: 16-bit rows of 64 columns (the 8-lane layout's other rows) at 4 and 2 rows a thread.
JK_OP_LAB(op_lnbf16_64, __nv_bfloat16, L32f)
JK_OP_LAB(op_lnbf16_64_r2, __nv_bfloat16, L32fR2)
JK_OP_LAB(op_lnf16_64, __half, L32f)
JK_OP_LAB(op_lnf16_64_r2, __half, L32fR2)
JK_OP_RMS(op_rmsbf16_64, __nv_bfloat16, L32f)
JK_OP_RMS(op_rmsbf16_64_r2, __nv_bfloat16, L32fR2)
// Call 5 timed LayerNorm's sums of x and x^2 reduced together (one chain of shuffles where the passes take two; the
// variance E[x^2] - mean^2 kept for rows with mean^2 <= E[x^2] / 2, the exact second pass for a warp with any other
// row) as *_s kernels: float32 32 columns 2.78 -> 2.75 us at 2 rows a thread, 2.85 -> 2.82 at 4; 16-bit 32 lost
// (1.98 -> 2.02-2.08), bf16 64 tied; rows of mean 4 (the second pass) 2.91. Not kept (bench/lab/s42_h200.md).
// Session 42 call 12: the 16-lane layout (rows of 256 bytes: float32 64, 16-bit 128 columns) at 2 and 4 rows a thread
// (the package's: 8 rows x 256 threads at 80 registers), as call 2 found 2 rows better than 4 at 8 lanes.
#define S42_W16(SUFFIX, R, T)                                                          \
  using L16_##SUFFIX = OnePackLayout<16, R, T, 1, true>;                               \
  using L16h_##SUFFIX = OnePackLayout<16, R, T, 1, true, true>;                        \
  JK_OP_LAB(op_lnf32_64_##SUFFIX, float, L16_##SUFFIX)                                 \
  JK_OP_RMS(op_rmsf32_64_##SUFFIX, float, L16_##SUFFIX)                                \
  JK_OP_LAB(op_lnbf16_128_##SUFFIX, __nv_bfloat16, L16_##SUFFIX)                       \
  JK_OP_LAB(op_lnf16_128_##SUFFIX, __half, L16_##SUFFIX)                               \
  JK_OP_RMS(op_rmsbf16_128_##SUFFIX, __nv_bfloat16, L16h_##SUFFIX)                     \
  JK_OP_RMS(op_rmsf16_128_##SUFFIX, __half, L16h_##SUFFIX)
S42_W16(r2t128, 2, 128)  // 16 rows a CTA, 3072 CTAs
S42_W16(r2t256, 2, 256)  // 32 rows, 1536
S42_W16(r4t128, 4, 128)  // 32 rows, 1536
S42_W16(r4t256, 4, 256)  // 64 rows, 768
JK_OP_LAB(op_lnf32_64, float, L128h)        // the package's 16-lane layouts for float32 64 (one-pack forced there)
JK_OP_RMS(op_rmsf32_64, float, L128hHold)
