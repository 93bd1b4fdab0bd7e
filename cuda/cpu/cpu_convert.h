// Bulk conversions between the storage types and float32 for the CPU handlers: cpu_types.h's per-element
// ToFloat / FromFloat, in loops the compiler vectorises, and float16 through the F16C instructions where the CPU
// has them (x86-64, checked once at run time; they convert half subnormals exactly with DAZ/FTZ set too). The
// per-element float16 conversions branch on the exponent and cost ~10x a float32 row's whole normalisation.
#pragma once
#include <cstdint>

#include "cpu/cpu_types.h"

// JK_CPU_HOST_VECTORS before a row loop's definition: the loop is also built for AVX2 (8 float lanes; the baseline is
// SSE2's 4) and picked at load time where the CPU has it, as XLA's CPU code uses the host's vectors. Linux x86-64 only
// (target_clones needs ifunc). AVX2 without FMA: no multiply-add is contracted, so both builds give the same bits.
#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define JK_CPU_HOST_VECTORS __attribute__((target_clones("avx2", "default")))
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

}  // namespace jk::cpu
