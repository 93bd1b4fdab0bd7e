// jk_transpose: y = jnp.transpose(x, permutation) for every dtype of 1, 2, 4 or 8 bytes.
#include <string>
#include <vector>

#include "common/ffi_helpers.h"
#include "cpu/transpose_cpu.h"
#include "ffi/targets.h"
#include "transpose/transpose_plan.h"
#ifdef JK_WITH_CUDA
#include "transpose/transpose_launch.h"
#endif

namespace jk {
namespace {

constexpr std::string_view kTranspose = "jk_transpose";

// Bytes per element of the types a transpose can move as opaque storage. Sub-byte types are packed by
// XLA and not addressable per element, so they are refused.
int ElementBytes(ffi::DataType t) {
  switch (t) {
    case ffi::DataType::S1:
    case ffi::DataType::S2:
    case ffi::DataType::S4:
    case ffi::DataType::U1:
    case ffi::DataType::U2:
    case ffi::DataType::U4:
    case ffi::DataType::F4E2M1FN:
    case ffi::DataType::TOKEN:
    case ffi::DataType::INVALID: return 0;
    default: {
      const int b = static_cast<int>(ffi::ByteWidth(t));
      return (b == 1 || b == 2 || b == 4 || b == 8) ? b : 0;
    }
  }
}

// Largest power of two <= 8 dividing both addresses: how far the planner may widen elements.
int CommonAlignment(const void* x, const void* y) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y) | 8;
  return static_cast<int>(v & (~v + 1));
}

// Validation shared by the CPU and CUDA handlers; on success fills `plan`.
ffi::Error CheckTranspose(const ffi::AnyBuffer& x, const ffi::AnyBuffer& y,
                          ffi::Span<const int64_t> perm, TransposePlan* plan) {
  const int bytes = ElementBytes(x.element_type());
  if (bytes == 0) {
    return ArgError(kTranspose, "x", "a dtype of 1, 2, 4 or 8 bytes", DataTypeName(x.element_type()));
  }
  JK_RETURN_IF_ERROR(ExpectDType(y.element_type(), x.element_type(), kTranspose, "y"));
  const auto dims = x.dimensions();
  const size_t rank = dims.size();
  if (perm.size() != rank) {
    return ArgError(kTranspose, "permutation", std::to_string(rank) + " axes (the rank of x)",
                    std::to_string(perm.size()) + " axes");
  }
  std::vector<bool> seen(rank, false);
  std::vector<int64_t> expected(rank);
  for (size_t j = 0; j < rank; ++j) {
    const int64_t p = perm[j];
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p]) {
      return ArgError(kTranspose, "permutation", "each axis in [0, " + std::to_string(rank) + ") once",
                      ShapeString(perm));
    }
    seen[p] = true;
    expected[j] = dims[p];
  }
  JK_RETURN_IF_ERROR(ExpectShape(y.dimensions(), expected, kTranspose, "y"));
  if (!PlanTranspose(dims.begin(), perm.begin(), static_cast<int>(rank), bytes,
                     CommonAlignment(x.untyped_data(), y.untyped_data()), plan)) {
    return ArgError(kTranspose, "x",
                    "at most " + std::to_string(kMaxTransposeRank) +
                        " axes after dropping size-1 axes and merging adjacent ones",
                    "shape " + ShapeString(dims));
  }
  return ffi::Error::Success();
}

ffi::Error TransposeCpu(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                        ffi::Span<const int64_t> permutation) {
  TransposePlan plan;
  JK_RETURN_IF_ERROR(CheckTranspose(x, *y, permutation, &plan));
  cpu::Transpose(plan, x.untyped_data(), y->untyped_data());
  return ffi::Error::Success();
}

#ifdef JK_WITH_CUDA
ffi::Error TransposeCuda(cudaStream_t stream, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                         ffi::Span<const int64_t> permutation) {
  TransposePlan plan;
  JK_RETURN_IF_ERROR(CheckTranspose(x, *y, permutation, &plan));
  return CudaStatus(stream, LaunchTranspose(stream, plan, x.untyped_data(), y->untyped_data()), kTranspose);
}
#endif

}  // namespace

XLA_FFI_DEFINE_HANDLER(kTransposeCpu, TransposeCpu,
                       ffi::Ffi::Bind()
                           .Arg<ffi::AnyBuffer>()  // x
                           .Ret<ffi::AnyBuffer>()  // y: x's dims permuted
                           .Attr<ffi::Span<const int64_t>>("permutation"));
#ifdef JK_WITH_CUDA
// Graph-safe (the same kernels or one memcpy every call, no allocation, no sync), so declared
// kCmdBufferCompatible as the norm and softmax handlers are: XLA then records it into its command buffers, where a
// chain of transposes cost ~5 us of host time per call outside them (session 34, bench/lab/s34_h200.md call 10).
// The first GPU run (39bd8ca) had dropped the trait after one segfault inside XLA on the execution after a raw
// ffi_call rejected by the validation (cf. openxla/xla#30183); tests/test_transpose.py::test_handler_validation_isolated
// runs that sequence in a child process on the GPU, and passed with the trait declared (call 11).
XLA_FFI_DEFINE_HANDLER(kTransposeCuda, TransposeCuda,
                       ffi::Ffi::Bind()
                           .Ctx<ffi::PlatformStream<cudaStream_t>>()
                           .Arg<ffi::AnyBuffer>()  // x
                           .Ret<ffi::AnyBuffer>()  // y
                           .Attr<ffi::Span<const int64_t>>("permutation"),
                       {ffi::Traits::kCmdBufferCompatible});
#endif

void AddTransposeTargets(TargetList& t) {
  t.push_back({"jk_transpose", kTransposeCpu, JK_CUDA_HANDLER(kTransposeCuda)});
}

}  // namespace jk
