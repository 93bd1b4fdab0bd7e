#include "cpu/cpu_convert.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define JK_CPU_F16C 1
#endif

namespace jk::cpu {
namespace {

#ifdef JK_CPU_F16C
bool HasF16c() {
  static const bool has = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return has;
}

__attribute__((target("avx,f16c"))) void HalfToFloatF16c(const uint16_t* x, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  for (; i < n; ++i) out[i] = _cvtsh_ss(x[i]);
}

__attribute__((target("avx,f16c"))) void FloatToHalfF16c(const float* v, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(v + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = _cvtss_sh(v[i], _MM_FROUND_TO_NEAREST_INT);
}
#endif

}  // namespace

void ToFloatN(const float* x, int64_t n, float* out) {
  if (n > 0 && x != out) std::memcpy(out, x, static_cast<size_t>(n) * sizeof(float));
}

JK_CPU_HOST_VECTORS
void ToFloatN(const BF16* x, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = ToFloat(x[i]);  // a shift: vectorised
}

void ToFloatN(const F16* x, int64_t n, float* out) {
#ifdef JK_CPU_F16C
  if (HasF16c()) return HalfToFloatF16c(reinterpret_cast<const uint16_t*>(x), n, out);
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = ToFloat(x[i]);
}

void FromFloatN(const float* v, int64_t n, float* out) { ToFloatN(v, n, out); }

JK_CPU_HOST_VECTORS
void FromFloatN(const float* v, int64_t n, BF16* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = FromFloat<BF16>(v[i]);  // branch-free: vectorised
}

void FromFloatN(const float* v, int64_t n, F16* out) {
#ifdef JK_CPU_F16C
  if (HasF16c()) return FloatToHalfF16c(v, n, reinterpret_cast<uint16_t*>(out));
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = FromFloat<F16>(v[i]);
}

}  // namespace jk::cpu
