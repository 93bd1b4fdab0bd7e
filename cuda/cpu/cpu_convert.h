// Bulk conversions between the storage types and float32 for the CPU handlers: cpu_types.h's per-element
// ToFloat / FromFloat, in loops the compiler vectorises, and float16 through the F16C instructions where the CPU
// has them (x86-64, checked once at run time; they convert half subnormals exactly with DAZ/FTZ set too). The
// per-element float16 conversions branch on the exponent and cost ~10x a float32 row's whole normalisation.
#pragma once
#include <cstdint>
#include <type_traits>

#include "cpu/cpu_types.h"

// JK_CPU_HOST_VECTORS before a row loop's definition: the loop is also built for AVX-512 and AVX2 (16 / 8 float lanes;
// the baseline is SSE2's 4) and the widest the CPU has is picked at load time, as XLA's CPU code uses the host's
// vectors. Linux x86-64 only (target_clones needs ifunc). Neither target enables FMA (GCC: -mavx512f does not imply
// -mfma), so no multiply-add is contracted and every build gives the same bits. Informal, on this 2-core AVX-512
// machine, 2048 rows of 1024 columns, ms: float32 softmax 1.76 -> 0.81-0.85 (XLA's CPU code 0.41), bf16 softmax 2.28
// -> 1.00 (0.79); float32 LayerNorm 0.76-0.90 -> 0.51-0.56 (0.39), bf16 1.37-1.42 -> 0.70 (0.58).
#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define JK_CPU_HOST_VECTORS __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define JK_CPU_HOST_VECTORS
#endif

namespace jk::cpu {

void ToFloatN(const float* x, int64_t n, float* out);
void ToFloatN(const BF16* x, int64_t n, float* out);
void ToFloatN(const F16* x, int64_t n, float* out);

// Round-to-nearest-even, as FromFloat.
void FromFloatN(const float* v, int64_t n, float* out);
void FromFloatN(const float* v, int64_t n, BF16* out);
void FromFloatN(const float* v, int64_t n, F16* out);

// x[0, n) as float32: a float32 array read in place, any other converted into buf (n floats; unused for float32).
template <typename T>
const float* AsFloatN(const T* x, int64_t n, float* buf) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else {
    ToFloatN(x, n, buf);
    return buf;
  }
}

}  // namespace jk::cpu
