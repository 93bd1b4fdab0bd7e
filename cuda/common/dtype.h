// Element types as the launchers see them. Plain C++ (no XLA, no CUDA headers), so the launcher headers
// stay the seam between the FFI layer and the kernels.
#pragma once
#include <cstdint>

namespace jk {

// The floating-point types the norms, softmax and matmul accept. Statistics and accumulation are float32
// for all three.
enum class DType : int32_t { kF32 = 0, kBF16 = 1, kF16 = 2 };

inline const char* DTypeName(DType t) {
  switch (t) {
    case DType::kF32: return "float32";
    case DType::kBF16: return "bfloat16";
    case DType::kF16: return "float16";
  }
  return "unknown";
}

// Used by DispatchFloat to hand the element type to a generic lambda.
template <typename T>
struct TypeTag {
  using type = T;
};

// The one dtype dispatch: calls fn(TypeTag<F32|BF16|F16>{}) for the matching element type and returns
// `unsupported` for anything else. Each side instantiates it with its own element types (CUDA: float,
// __nv_bfloat16, __half; CPU: float, jk::cpu::BF16, jk::cpu::F16).
template <typename F32, typename BF16, typename F16, typename R, typename Fn>
R DispatchFloat(DType t, R unsupported, Fn&& fn) {
  switch (t) {
    case DType::kF32: return fn(TypeTag<F32>{});
    case DType::kBF16: return fn(TypeTag<BF16>{});
    case DType::kF16: return fn(TypeTag<F16>{});
  }
  return unsupported;
}

}  // namespace jk
