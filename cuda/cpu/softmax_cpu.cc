// Plain C++ softmax. Rows are processed as (n, inner) slabs: every loop runs over the contiguous inner
// positions (or, for the last axis, along the row), which the compiler vectorises; statistics are float32.
#include "cpu/softmax_cpu.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu/cpu_convert.h"
#include "cpu/cpu_types.h"

namespace jk::cpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

bool Degenerate(float m, float s) { return !std::isfinite(m) || std::isnan(s); }

// Mask offsets of the inner positions of one slab (the axis and outer parts are added per row).
std::vector<int64_t> InnerOffsets(const MaskIndex& mask, int64_t inner) {
  std::vector<int64_t> off(mask.data ? inner : 0);
  for (int64_t i = 0; i < static_cast<int64_t>(off.size()); ++i) off[i] = mask.inner.Offset(i);
  return off;
}

// Row j of a slab as float32 with masked entries at -inf.
template <typename T>
void LoadRow(const T* xr, const uint8_t* mr, const std::vector<int64_t>& ioff, int64_t inner, float* v) {
  for (int64_t i = 0; i < inner; ++i) v[i] = ToFloat(xr[i]);
  if (mr)
    for (int64_t i = 0; i < inner; ++i) v[i] = mr[ioff[i]] ? v[i] : -kInf;
}

// Per-position max and sum of one slab x[j * inner + i] (j < n, i < inner). Two reads of x rather than a
// float32 copy of the slab, whose size is unbounded.
template <typename T>
void SlabStats(const T* x, int64_t n, int64_t inner, const MaskIndex& mask, int64_t mrow,
               const std::vector<int64_t>& ioff, float* v, float* m, float* s) {
  auto mask_row = [&](int64_t j) { return mask.data ? mask.data + mrow + j * mask.axis_stride : nullptr; };
  for (int64_t i = 0; i < inner; ++i) m[i] = -kInf;
  for (int64_t j = 0; j < n; ++j) {
    LoadRow(x + j * inner, mask_row(j), ioff, inner, v);
    for (int64_t i = 0; i < inner; ++i) m[i] = v[i] > m[i] ? v[i] : m[i];
  }
  // -inf entries contribute nothing (and must not turn -inf - -inf into NaN); a live NaN makes s NaN.
  // The running sums are double: a sequential float32 sum over 1e5 terms drifts by ~1e-4 relative (the
  // GPU's tree of short per-thread sums does not).
  std::vector<double> acc(inner, 0.0);
  for (int64_t j = 0; j < n; ++j) {
    LoadRow(x + j * inner, mask_row(j), ioff, inner, v);
    for (int64_t i = 0; i < inner; ++i) acc[i] += v[i] == -kInf ? 0.f : std::exp(v[i] - m[i]);
  }
  for (int64_t i = 0; i < inner; ++i) s[i] = static_cast<float>(acc[i]);
}

// Writes one slab from its statistics.
template <typename T>
void SlabApply(const T* x, T* y, int64_t n, int64_t inner, const MaskIndex& mask, int64_t mrow,
               const std::vector<int64_t>& ioff, const float* m, const float* s, bool log) {
  std::vector<float> a(inner);
  std::vector<char> degenerate(inner);
  for (int64_t i = 0; i < inner; ++i) {
    degenerate[i] = Degenerate(m[i], s[i]);
    a[i] = log ? std::log(s[i]) : 1.f / s[i];
  }
  const float masked_value = log ? -kInf : 0.f;
  for (int64_t j = 0; j < n; ++j) {
    const T* xr = x + j * inner;
    T* yr = y + j * inner;
    const uint8_t* mr = mask.data ? mask.data + mrow + j * mask.axis_stride : nullptr;
    for (int64_t i = 0; i < inner; ++i) {
      const float t = ToFloat(xr[i]) - m[i];
      float out = log ? t - a[i] : std::exp(t) * a[i];
      if (degenerate[i]) out = kNaN;
      if (mr && !mr[ioff[i]]) out = masked_value;
      yr[i] = FromFloat<T>(out);
    }
  }
}

// e^t for t <= 0 (or -inf, NaN), branch-free so that a loop over it vectorises (std::exp does not): t = k ln2 + r
// with |r| <= ln2 / 2 (Cody-Waite), e^r by Cephes' degree-7 expf polynomial (~1 ulp), times 2^k built in the
// exponent bits. Results below 2^-126 are 0 (std::exp gives subnormals down to 2^-149); softmax's outputs there
// are under 1.2e-38 either way.
inline float ExpNonPositive(float t) {
  t = std::max(t, -104.f);  // also -inf; NaN passes through (std::max returns its first argument)
  const float k = t * 1.44269504088896341f + 12582912.f;  // 1.5 * 2^23: round(t / ln2) in the low mantissa bits
  uint32_t kb;
  std::memcpy(&kb, &k, 4);
  const float n = k - 12582912.f;
  const float r = (t - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.f;
  const int32_t e = static_cast<int32_t>(kb - 0x4b400000u);  // round(t / ln2), in [-150, 0]
  const uint32_t sb = static_cast<uint32_t>(e + 127) << 23;
  float scale;
  std::memcpy(&scale, &sb, 4);
  const float y = p * scale;  // unconditional: a conditional multiply (it may raise FP flags) is not if-converted
  return e < -126 ? 0.f : y;
}

// e[j] = e^(v[j] - m) over a row: the loop the CPU softmax spends its time in, also built for AVX-512 and AVX2
// (JK_CPU_HOST_VECTORS, cpu_convert.h).
JK_CPU_HOST_VECTORS
void ExpRow(const float* v, float m, int64_t n, float* e) {
  for (int64_t j = 0; j < n; ++j) e[j] = ExpNonPositive(v[j] - m);
}

// A row's max over 32 lanes (2 AVX-512 / 4 AVX2 / 8 SSE registers, so the max's latency does not chain every step);
// NaNs left out, as SlabStats.
JK_CPU_HOST_VECTORS
float MaxRow(const float* v, int64_t n) {
  constexpr int kLanes = 32;
  float lm[kLanes];
  for (int k = 0; k < kLanes; ++k) lm[k] = -kInf;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) lm[k] = v[j + k] > lm[k] ? v[j + k] : lm[k];
  float m = -kInf;
  for (; j < n; ++j) m = v[j] > m ? v[j] : m;
  for (int k = 0; k < kLanes; ++k) m = lm[k] > m ? lm[k] : m;
  return m;
}

// A row's sum in 16 double lanes (a sequential float32 sum over 1e5 terms drifts by ~1e-4 relative); lane k takes
// the elements j = k mod 16 in order, so every build gives the same bits.
JK_CPU_HOST_VECTORS
double SumRowDouble(const float* e, int64_t n) {
  constexpr int kLanes = 16;
  double ls[kLanes] = {0.0};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) ls[k] += e[j + k];
  double sd = 0.0;
  for (; j < n; ++j) sd += e[j];
  for (int k = 0; k < kLanes; ++k) sd += ls[k];
  return sd;
}

// The last axis without a mask (softmax / log_softmax, not the stats / apply entries): a float32 row, its max,
// exponentials and double sum in loops the compiler vectorises (also for AVX-512 / AVX2); the same results as
// SlabStats / SlabApply up to the exponential's last ulp. (One loop for the exponentials and their sum did not
// vectorise and ran 2x slower, session 29.)
template <typename T>
void SoftmaxRows(const T* x, T* y, int64_t outer, int64_t n, bool log) {
  // vbuf: the row as float32 for the 16-bit dtypes (AsFloatN reads float32 in place).
  std::vector<float> vbuf(std::is_same_v<T, float> ? 0 : static_cast<size_t>(n)), e(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o) {
    const float* v = AsFloatN(x + o * n, n, vbuf.data());
    const float m = MaxRow(v, n);
    ExpRow(v, m, n, e.data());
    const float sum = static_cast<float>(SumRowDouble(e.data(), n));
    float* out = std::is_same_v<T, float> ? reinterpret_cast<float*>(y + o * n) : e.data();
    if (Degenerate(m, sum)) {
      for (int64_t j = 0; j < n; ++j) out[j] = kNaN;
    } else if (log) {
      const float log_sum = std::log(sum);
      for (int64_t j = 0; j < n; ++j) out[j] = (v[j] - m) - log_sum;
    } else {
      const float a = 1.f / sum;
      for (int64_t j = 0; j < n; ++j) out[j] = e[j] * a;
    }
    if constexpr (!std::is_same_v<T, float>) FromFloatN(out, n, y + o * n);
  }
}

template <typename T>
void SoftmaxT(const T* x, T* y, float* max_out, float* sum_out, const float* max_in, const float* sum_in,
              int64_t outer, int64_t n, int64_t inner, const MaskIndex& mask, bool log) {
  if (inner == 1 && mask.data == nullptr && max_out == nullptr && max_in == nullptr && n > 0)
    return SoftmaxRows(x, y, outer, n, log);
  const std::vector<int64_t> ioff = InnerOffsets(mask, inner);
  std::vector<float> v(inner), m(inner), s(inner);
  for (int64_t o = 0; o < outer; ++o) {
    const T* xo = x + o * n * inner;
    const int64_t mrow = mask.data ? mask.outer.Offset(o) : 0;
    const float* mo = max_in ? max_in + o * inner : m.data();
    const float* so = sum_in ? sum_in + o * inner : s.data();
    if (!max_in) SlabStats(xo, n, inner, mask, mrow, ioff, v.data(), m.data(), s.data());
    if (max_out) {
      for (int64_t i = 0; i < inner; ++i) {
        max_out[o * inner + i] = m[i];
        sum_out[o * inner + i] = s[i];
      }
      continue;
    }
    SlabApply(xo, y + o * n * inner, n, inner, mask, mrow, ioff, mo, so, log);
  }
}

template <typename Fn>
void Dispatch(DType dtype, Fn&& fn) {
  DispatchFloat<float, BF16, F16>(dtype, 0, [&](auto tag) {
    fn(tag);
    return 0;
  });
}

}  // namespace

void Softmax(DType dtype, const void* x, void* y, int64_t outer, int64_t n, int64_t inner, const MaskIndex& mask,
             bool log) {
  Dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SoftmaxT<T>(static_cast<const T*>(x), static_cast<T*>(y), nullptr, nullptr, nullptr, nullptr, outer, n, inner,
                mask, log);
  });
}

void SoftmaxStats(DType dtype, const void* x, float* row_max, float* row_sum, int64_t outer, int64_t n,
                  int64_t inner, const MaskIndex& mask) {
  Dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SoftmaxT<T>(static_cast<const T*>(x), nullptr, row_max, row_sum, nullptr, nullptr, outer, n, inner, mask,
                false);
  });
}

void SoftmaxApply(DType dtype, const void* x, const float* row_max, const float* row_sum, void* y, int64_t outer,
                  int64_t n, int64_t inner, const MaskIndex& mask, bool log) {
  Dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SoftmaxT<T>(static_cast<const T*>(x), static_cast<T*>(y), nullptr, nullptr, row_max, row_sum, outer, n, inner,
                mask, log);
  });
}

}  // namespace jk::cpu
