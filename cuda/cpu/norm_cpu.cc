// CPU LayerNorm / RMSNorm. Rows are converted to a float32 buffer and reduced with two passes (mean,
// then the sum of squared deviations) in loops the compiler vectorises: the last-axis case keeps 16
// independent partial sums per row (a plain float reduction is not reassociated without -ffast-math),
// the strided case reduces whole (n, inner) slabs with the inner index innermost.
#include "cpu/norm_cpu.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "cpu/cpu_convert.h"
#include "cpu/cpu_types.h"

namespace jk::cpu {
namespace {

enum class Kind { kLayerNorm, kRmsNorm };
enum class Mode { kNormalize, kStatsOnly, kApply };

constexpr int kLanes = 16;

// sum(v - shift). LayerNorm shifts by the row's first element: the partial sums then grow with the
// row's spread, not its mean, so a large mean with a small variance keeps its accuracy in float32.
JK_CPU_HOST_VECTORS
float SumLanes(const float* v, int64_t n, float shift) {
  float acc[kLanes] = {0.f};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] += v[j + k] - shift;
  float s = 0.f;
  for (; j < n; ++j) s += v[j] - shift;
  for (int k = 0; k < kLanes; ++k) s += acc[k];
  return s;
}

// sum(((v - shift) - center)^2): LayerNorm's deviations from shift + center, its mean kept as those two floats (the
// float32 sum shift + center would round the mean by up to half an ulp of |mean|, which the outputs would carry).
JK_CPU_HOST_VECTORS
float SumSquaresLanes(const float* v, int64_t n, float shift, float center) {
  float acc[kLanes] = {0.f};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) {
      const float d = (v[j + k] - shift) - center;
      acc[k] += d * d;
    }
  float s = 0.f;
  for (; j < n; ++j) s += ((v[j] - shift) - center) * ((v[j] - shift) - center);
  for (int k = 0; k < kLanes; ++k) s += acc[k];
  return s;
}

// Affine parameter row of outer index o (null when absent).
template <typename T>
const T* GroupRow(const T* p, int64_t o, int64_t groups, const NormShape& s) {
  if (p == nullptr) return nullptr;
  const int64_t per_group = std::max<int64_t>(1, s.outer / std::max<int64_t>(1, groups));
  return p + (o / per_group) * s.n;
}

struct Pointers {
  const void* x;
  const void* scale;
  const void* bias;
  void* y;
  float* mean;
  float* rstd;  // stats-only LayerNorm: M2
};

// Writes y for one slab (n rows of `inner` floats in xf) given per-inner statistics: LayerNorm's mean as
// shift + center (see SumSquaresLanes).
template <typename T, Kind K>
void NormalizeSlab(const float* xf, const float* shift, const float* center, const float* rstd, const T* scale,
                   const T* bias, int64_t n, int64_t inner, T* y, float* tmp) {
  for (int64_t j = 0; j < n; ++j) {
    const float g = scale ? ToFloat(scale[j]) : 1.f;
    const float b = (K == Kind::kLayerNorm && bias) ? ToFloat(bias[j]) : 0.f;
    const float* row = xf + j * inner;
    for (int64_t i = 0; i < inner; ++i) {
      const float c = K == Kind::kLayerNorm ? (row[i] - shift[i]) - center[i] : row[i];
      tmp[i] = c * rstd[i] * g + b;
    }
    FromFloatN(tmp, inner, y + j * inner);
  }
}

// The last axis (inner == 1): one row of n, the parameters as float32 rows (ones / zeros where absent), so the loop
// runs over contiguous floats and vectorises; out is y itself for float32, else a float32 row converted after.
// RMSNorm passes shift = center = 0 ((x - 0) - 0 is x, -0 included).
JK_CPU_HOST_VECTORS
void NormalizeRow(const float* xf, float shift, float center, float rstd, const float* gf, const float* bf,
                  int64_t n, float* out) {
  for (int64_t j = 0; j < n; ++j) out[j] = ((xf[j] - shift) - center) * rstd * gf[j] + bf[j];
}

// A parameter row as float32 (fill where absent), converted again only when the row changes (grouped parameters).
template <typename T>
class ParamRow {
 public:
  ParamRow(int64_t n, float fill) : v_(static_cast<size_t>(n), fill), fill_(fill) {}
  const float* Get(const T* row) {
    if (row != last_) {
      if (row != nullptr) ToFloatN(row, static_cast<int64_t>(v_.size()), v_.data());
      else std::fill(v_.begin(), v_.end(), fill_);
      last_ = row;
    }
    return v_.data();
  }

 private:
  std::vector<float> v_;
  float fill_;
  const T* last_ = nullptr;
};

template <typename T, Kind K, Mode M>
void Run(const Pointers& ptr, const NormShape& s, float epsilon) {
  const int64_t n = s.n, inner = s.inner, slab = n * inner;
  const T* x = static_cast<const T*>(ptr.x);
  T* y = static_cast<T*>(ptr.y);
  const T* scale = static_cast<const T*>(ptr.scale);
  const T* bias = static_cast<const T*>(ptr.bias);
  // LayerNorm's mean is shift + center: shift the slab's first row (x[0] along the axis), center the mean of
  // x - shift; given statistics (kApply) have shift 0.
  // xbuf: the slab as float32 for the 16-bit dtypes (AsFloatN reads float32 in place).
  std::vector<float> xbuf(std::is_same_v<T, float> ? 0 : static_cast<size_t>(slab)),
      shift(static_cast<size_t>(inner)), center(static_cast<size_t>(inner)), rstd(static_cast<size_t>(inner)),
      acc(static_cast<size_t>(inner)), tmp(static_cast<size_t>(inner == 1 ? n : inner));
  std::vector<double> wide(inner == 1 ? 0 : static_cast<size_t>(inner));
  const float inv_n = 1.f / static_cast<float>(n);  // n == 0: inf, and every statistic becomes NaN
  ParamRow<T> gf(inner == 1 ? n : 0, 1.f), bf(inner == 1 ? n : 0, 0.f);
  for (int64_t o = 0; o < s.outer; ++o) {
    const float* xf = AsFloatN(x + o * slab, slab, xbuf.data());
    float* stat_mean = ptr.mean ? ptr.mean + o * inner : nullptr;
    float* stat_rstd = ptr.rstd ? ptr.rstd + o * inner : nullptr;
    if constexpr (M == Mode::kApply) {
      for (int64_t i = 0; i < inner; ++i) {
        shift[i] = 0.f;
        center[i] = K == Kind::kLayerNorm ? stat_mean[i] : 0.f;
        rstd[i] = stat_rstd[i];
      }
    } else if (inner == 1) {
      if (K == Kind::kLayerNorm) {
        shift[0] = n > 0 ? xf[0] : 0.f;
        center[0] = SumLanes(xf, n, shift[0]) * inv_n;
        acc[0] = SumSquaresLanes(xf, n, shift[0], center[0]);  // M2
      } else {
        shift[0] = center[0] = 0.f;
        acc[0] = SumSquaresLanes(xf, n, 0.f, 0.f);  // sum of squares
      }
    } else {
      // Column sums in double: one float32 accumulator per column, added to n times in sequence, drifted by
      // ~2e-5 relative at n = 70001 (tests/test_norm_strided.py::test_split_axis); SumLanes' lanes do not apply here.
      std::fill(wide.begin(), wide.end(), 0.0);
      for (int64_t i = 0; i < inner; ++i) shift[i] = K == Kind::kLayerNorm && n > 0 ? xf[i] : 0.f;
      if (K == Kind::kLayerNorm) {
        // Shifted by row j = 0 (see SumLanes), which exists whenever the loop runs.
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < inner; ++i) wide[i] += xf[j * inner + i] - shift[i];
        for (int64_t i = 0; i < inner; ++i) center[i] = static_cast<float>(wide[i] / static_cast<double>(n));
        std::fill(wide.begin(), wide.end(), 0.0);
      } else {
        std::fill(center.begin(), center.end(), 0.f);
      }
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i) {
          const float d = (xf[j * inner + i] - shift[i]) - center[i];
          wide[i] += static_cast<double>(d) * d;
        }
      for (int64_t i = 0; i < inner; ++i) acc[i] = static_cast<float>(wide[i]);
    }
    if constexpr (M == Mode::kStatsOnly) {
      for (int64_t i = 0; i < inner; ++i) {
        if (K == Kind::kLayerNorm) {
          stat_mean[i] = n == 0 ? NAN : shift[i] + center[i];
          stat_rstd[i] = n == 0 ? NAN : acc[i];
        } else {
          stat_mean[i] = acc[i] * inv_n;
        }
      }
      continue;
    }
    if constexpr (M == Mode::kNormalize) {
      for (int64_t i = 0; i < inner; ++i) {
        rstd[i] = 1.f / std::sqrt(acc[i] * inv_n + epsilon);
        if (n == 0) center[i] = rstd[i] = NAN;  // the mean of nothing, as jnp.mean gives
      }
      if (stat_mean != nullptr)
        for (int64_t i = 0; i < inner; ++i) {
          stat_mean[i] = shift[i] + center[i];
          stat_rstd[i] = rstd[i];
        }
    }
    const T* scale_row = GroupRow(scale, o, s.scale_groups, s);
    const T* bias_row = K == Kind::kLayerNorm ? GroupRow(bias, o, s.bias_groups, s) : nullptr;
    if (inner == 1) {
      T* yo = y + o * slab;
      float* out = std::is_same_v<T, float> ? reinterpret_cast<float*>(yo) : tmp.data();
      NormalizeRow(xf, shift[0], center[0], rstd[0], gf.Get(scale_row), bf.Get(bias_row), n, out);
      if constexpr (!std::is_same_v<T, float>) FromFloatN(out, n, yo);
    } else {
      NormalizeSlab<T, K>(xf, shift.data(), center.data(), rstd.data(), scale_row, bias_row, n, inner,
                          y + o * slab, tmp.data());
    }
  }
}

template <Kind K, Mode M>
bool Dispatch(DType dtype, const Pointers& p, const NormShape& s, float epsilon) {
  return DispatchFloat<float, BF16, F16>(dtype, false, [&](auto tag) {
    Run<typename decltype(tag)::type, K, M>(p, s, epsilon);
    return true;
  });
}

}  // namespace

bool LayerNorm(DType dtype, const void* x, const void* scale, const void* bias, void* y, float* mean,
               float* rstd, const NormShape& shape, float epsilon) {
  return Dispatch<Kind::kLayerNorm, Mode::kNormalize>(dtype, {x, scale, bias, y, mean, rstd}, shape, epsilon);
}

bool RmsNorm(DType dtype, const void* x, const void* scale, void* y, const NormShape& shape, float epsilon) {
  return Dispatch<Kind::kRmsNorm, Mode::kNormalize>(dtype, {x, scale, nullptr, y, nullptr, nullptr}, shape,
                                                    epsilon);
}

bool LayerNormStats(DType dtype, const void* x, float* mean, float* m2, const NormShape& shape) {
  return Dispatch<Kind::kLayerNorm, Mode::kStatsOnly>(dtype, {x, nullptr, nullptr, nullptr, mean, m2}, shape,
                                                      0.f);
}

bool RmsNormStats(DType dtype, const void* x, float* mean_square, const NormShape& shape) {
  return Dispatch<Kind::kRmsNorm, Mode::kStatsOnly>(dtype, {x, nullptr, nullptr, nullptr, mean_square, nullptr},
                                                    shape, 0.f);
}

bool LayerNormApply(DType dtype, const void* x, const float* mean, const float* rstd, const void* scale,
                    const void* bias, void* y, const NormShape& shape) {
  return Dispatch<Kind::kLayerNorm, Mode::kApply>(
      dtype, {x, scale, bias, y, const_cast<float*>(mean), const_cast<float*>(rstd)}, shape, 0.f);
}

bool RmsNormApply(DType dtype, const void* x, const float* rstd, const void* scale, void* y,
                  const NormShape& shape) {
  return Dispatch<Kind::kRmsNorm, Mode::kApply>(dtype, {x, scale, nullptr, y, nullptr, const_cast<float*>(rstd)},
                                                shape, 0.f);
}

}  // namespace jk::cpu
