// Half-precision storage types for the CPU implementations, with float32 conversion. Round-to-nearest-
// even on the way down, as the GPU's __float2bfloat16_rn / __float2half_rn do, so both backends agree.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace jk::cpu {

struct BF16 {
  uint16_t bits;
};
struct F16 {
  uint16_t bits;
};

inline float ToFloat(float v) { return v; }

inline float ToFloat(BF16 v) {
  uint32_t u = static_cast<uint32_t>(v.bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float ToFloat(F16 v) {
  uint32_t sign = (v.bits & 0x8000u) << 16, exp = (v.bits >> 10) & 0x1f, man = v.bits & 0x3ffu;
  uint32_t u;
  if (exp == 0x1f) {
    u = sign | 0x7f800000u | (man << 13);  // inf / nan
  } else if (exp != 0) {
    u = sign | ((exp + 112) << 23) | (man << 13);  // normal: rebias 15 -> 127
  } else if (man == 0) {
    u = sign;  // signed zero
  } else {     // subnormal: normalise
    int e = -1;
    do {
      man <<= 1;
      ++e;
    } while ((man & 0x400u) == 0);
    u = sign | (static_cast<uint32_t>(112 - e) << 23) | ((man & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

template <typename T>
T FromFloat(float v);

template <>
inline float FromFloat<float>(float v) { return v; }

// Branch-free (a select), so loops over it vectorise (FromFloatN, cpu_convert.h): NaNs keep a payload bit, the
// rest round to nearest even.
template <>
inline BF16 FromFloat<BF16>(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16, nan = (u >> 16) | 0x40u;
  return BF16{static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded)};
}

template <>
inline F16 FromFloat<F16>(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return F16{static_cast<uint16_t>(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0))};
  if (a >= 0x477ff000u) return F16{static_cast<uint16_t>(sign | 0x7c00u)};  // rounds past 65504: inf
  if (a < 0x38800000u) {  // below the smallest normal half: round to a subnormal (or zero)
    float f;
    std::memcpy(&f, &a, 4);
    float scaled = f * 16777216.0f;  // 2^24: one unit is the smallest subnormal
    uint32_t m = static_cast<uint32_t>(std::nearbyint(scaled));
    return F16{static_cast<uint16_t>(sign | m)};
  }
  uint32_t mant = a & 0x7fffffu, exp = (a >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // nearest even; may carry into exp
  return F16{static_cast<uint16_t>(sign | h)};
}

}  // namespace jk::cpu
