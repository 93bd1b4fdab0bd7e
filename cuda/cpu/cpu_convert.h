// Bulk conversions between the storage types and float32 for the CPU handlers: cpu_types.h's per-element
// ToFloat / FromFloat, in loops the compiler vectorises, and float16 through the F16C instructions where the CPU
// has them (x86-64, checked once at run time; they convert half subnormals exactly with DAZ/FTZ set too). The
// per-element float16 conversions branch on the exponent and cost ~10x a float32 row's whole normalisation.
#pragma once
#include <cstdint>

#include "cpu/cpu_types.h"

namespace jk::cpu {

void ToFloatN(const float* x, int64_t n, float* out);
void ToFloatN(const BF16* x, int64_t n, float* out);
void ToFloatN(const F16* x, int64_t n, float* out);

// Round-to-nearest-even, as FromFloat.
void FromFloatN(const float* v, int64_t n, float* out);
void FromFloatN(const float* v, int64_t n, BF16* out);
void FromFloatN(const float* v, int64_t n, F16* out);

}  // namespace jk::cpu
