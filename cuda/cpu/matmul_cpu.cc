// CPU matmul: operands are converted to float32 panels, then a register/cache-blocked kernel whose inner
// loop runs along N (contiguous in b and out) so the compiler vectorises it. The epilogue (bias,
// activation, residual) is applied once per output element, in float32, before rounding to the output
// dtype, exactly as the CUDA kernels do.
#include "cpu/matmul_cpu.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "cpu/cpu_convert.h"
#include "cpu/cpu_types.h"

namespace jk::cpu {
namespace {

constexpr int64_t kRowBlock = 4;    // rows of a sharing one pass over a panel of b
constexpr int64_t kColBlock = 256;  // columns per accumulator block: 4 x 256 floats stay in L1

// v * sigmoid(s) without overflow or a subnormal factor: 1 / (1 + exp(-s)) turned v / inf into -0 where
// the result is still a normal number (tanh-gelu near x = -10, silu below x = -88), and v * exp(s) loses
// exp(s) to the flush-to-zero mode XLA's CPU threads run in once it is subnormal, so for s < 0 v is folded
// into the exponent.
float TimesSigmoid(float v, float s) {
  if (s >= 0.f) return v / (1.f + std::exp(-s));
  return std::copysign(std::exp(std::log(std::fabs(v)) + s), v) / (1.f + std::exp(s));
}

float Activate(Activation act, float v) {
  switch (act) {
    case Activation::kNone: return v;
    case Activation::kRelu: return v > 0.f ? v : (std::isnan(v) ? v : 0.f);
    // The forms of the CUDA epilogue: 1 + erf(x) and 1 + tanh(u) cancel in the negative tail (float32
    // returned 0 from x ~ -5.9 where the true gelu is a tiny negative number).
    case Activation::kGelu: return 0.5f * v * std::erfc(-v * 0.70710678118654752f);
    case Activation::kGeluTanh: {
      const float c = 0.79788456080286536f;  // sqrt(2 / pi); 0.5 (1 + tanh(u)) = sigmoid(2u)
      return TimesSigmoid(v, 2.f * c * (v + 0.044715f * v * v * v));
    }
    case Activation::kSilu: return TimesSigmoid(v, v);
  }
  return v;
}

// c (rows x n, ldc = n) = a (rows x k, lda = k) @ b (k x n), all float32; rows <= kRowBlock.
void GemmBlock(const float* a, int64_t rows, const float* b, int64_t n, int64_t k, float* c) {
  for (int64_t j0 = 0; j0 < n; j0 += kColBlock) {
    const int64_t nj = std::min(kColBlock, n - j0);
    float acc[kRowBlock][kColBlock];
    for (int64_t r = 0; r < kRowBlock; ++r) std::fill(acc[r], acc[r] + nj, 0.f);
    for (int64_t kk = 0; kk < k; ++kk) {
      const float* brow = b + kk * n + j0;
      for (int64_t r = 0; r < rows; ++r) {
        const float av = a[r * k + kk];
        float* accr = acc[r];
        for (int64_t j = 0; j < nj; ++j) accr[j] += av * brow[j];
      }
    }
    for (int64_t r = 0; r < rows; ++r) std::memcpy(c + r * n + j0, acc[r], nj * sizeof(float));
  }
}

template <typename T>
void MatmulTyped(const MatmulProblem& p) {
  const int64_t m = p.m, n = p.n, k = p.k;
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  const T* bias = static_cast<const T*>(p.bias);
  const T* res = static_cast<const T*>(p.residual);
  T* out = static_cast<T*>(p.out);

  std::vector<float> bf(static_cast<size_t>(k * n)), af(static_cast<size_t>(kRowBlock * k)),
      cf(static_cast<size_t>(kRowBlock * n)), biasf(static_cast<size_t>(n));
  const T* last_b = nullptr;
  for (int64_t z = 0; z < p.batch_count; ++z) {
    const BatchOffsets o = OffsetsOf(p, z);
    if (b + o.b != last_b) {  // broadcast b: convert once, not once per batch index
      last_b = b + o.b;
      ToFloatN(last_b, k * n, bf.data());
    }
    if (bias) ToFloatN(bias + o.bias, n, biasf.data());
    T* outz = out + z * m * n;
    for (int64_t i0 = 0; i0 < m; i0 += kRowBlock) {
      const int64_t rows = std::min(kRowBlock, m - i0);
      ToFloatN(a + o.a + i0 * k, rows * k, af.data());
      GemmBlock(af.data(), rows, bf.data(), n, k, cf.data());
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t row = i0 + r;
        for (int64_t j = 0; j < n; ++j) {
          float v = cf[r * n + j];
          if (bias) v += biasf[j];
          v = Activate(p.activation, v);
          if (res) v += ToFloat(res[o.res + row * p.res_row_stride + j * p.res_col_stride]);
          outz[row * n + j] = FromFloat<T>(v);
        }
      }
    }
  }
}

}  // namespace

void Matmul(const MatmulProblem& p) {
  DispatchFloat<float, BF16, F16>(p.dtype, 0, [&](auto tag) {
    MatmulTyped<typename decltype(tag)::type>(p);
    return 0;
  });
}

}  // namespace jk::cpu
