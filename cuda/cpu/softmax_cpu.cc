// Plain C++ softmax. Rows are processed as (n, inner) slabs: every loop runs over the contiguous inner
// positions (or, for the last axis, along the row), which the compiler vectorises; statistics are float32.
#include "cpu/softmax_cpu.h"

#include <cmath>
#include <limits>
#include <vector>

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

template <typename T>
void SoftmaxT(const T* x, T* y, float* max_out, float* sum_out, const float* max_in, const float* sum_in,
              int64_t outer, int64_t n, int64_t inner, const MaskIndex& mask, bool log) {
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
