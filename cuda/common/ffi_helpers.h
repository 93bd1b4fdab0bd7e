// Helpers shared by the FFI handlers: dtype mapping, shape strings and error messages that name the op,
// the argument, what was expected and what arrived.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "common/dtype.h"
#include "common/workspace.h"
#include "xla/ffi/api/ffi.h"

namespace jk {
namespace ffi = xla::ffi;

// Messages are built with std::string and std::to_string only, never iostreams: inside a jaxlib 0.11.2
// CUDA process, inserting an integer into a std::ostringstream from this module segfaulted in libstdc++
// (ostream::_M_insert<long> reaching a num_put facet that was not there), turning every error message
// into a crash.
inline std::string ShapeString(ffi::Span<const int64_t> dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

inline const char* DataTypeName(ffi::DataType t) {
  switch (t) {
    case ffi::DataType::PRED: return "bool";
    case ffi::DataType::S8: return "int8";
    case ffi::DataType::S16: return "int16";
    case ffi::DataType::S32: return "int32";
    case ffi::DataType::S64: return "int64";
    case ffi::DataType::U8: return "uint8";
    case ffi::DataType::U16: return "uint16";
    case ffi::DataType::U32: return "uint32";
    case ffi::DataType::U64: return "uint64";
    case ffi::DataType::F16: return "float16";
    case ffi::DataType::BF16: return "bfloat16";
    case ffi::DataType::F32: return "float32";
    case ffi::DataType::F64: return "float64";
    case ffi::DataType::C64: return "complex64";
    case ffi::DataType::C128: return "complex128";
    default: return "an unsupported type";
  }
}

// "jk_layer_norm: argument 'scale': expected shape (512,), got (3, 4)"
inline ffi::Error ArgError(std::string_view op, std::string_view arg, std::string_view expected,
                           std::string_view actual) {
  std::string s(op);
  s.append(": argument '").append(arg).append("': expected ").append(expected).append(", got ").append(actual);
  return ffi::Error::InvalidArgument(s);
}

inline ffi::ErrorOr<DType> FloatDType(ffi::DataType t, std::string_view op, std::string_view arg) {
  switch (t) {
    case ffi::DataType::F32: return DType::kF32;
    case ffi::DataType::BF16: return DType::kBF16;
    case ffi::DataType::F16: return DType::kF16;
    default:
      return ffi::Unexpected<ffi::Error>(
          ArgError(op, arg, "dtype float32, bfloat16 or float16", DataTypeName(t)));
  }
}

inline ffi::Error ExpectDType(ffi::DataType actual, ffi::DataType expected, std::string_view op,
                              std::string_view arg) {
  if (actual == expected) return ffi::Error::Success();
  return ArgError(op, arg, std::string("dtype ") + DataTypeName(expected), DataTypeName(actual));
}

inline ffi::Error ExpectShape(ffi::Span<const int64_t> actual, ffi::Span<const int64_t> expected,
                              std::string_view op, std::string_view arg) {
  if (actual == expected) return ffi::Error::Success();
  return ArgError(op, arg, "shape " + ShapeString(expected), ShapeString(actual));
}

// The "absent" marker of an optional buffer (no scale, no mask, no bias...): a rank-1 array of size 0.
inline bool IsAbsent(const ffi::AnyBuffer& b) {
  return b.dimensions().size() == 1 && b.dimensions()[0] == 0;
}

inline int64_t Product(ffi::Span<const int64_t> dims, size_t begin = 0,
                       size_t end = std::numeric_limits<size_t>::max()) {
  int64_t p = 1;
  for (size_t i = begin; i < dims.size() && i < end; ++i) p *= dims[i];
  return p;
}

// Resolves a possibly negative axis against `rank`, or returns an error naming the op.
inline ffi::ErrorOr<int64_t> NormalizeAxis(int64_t axis, size_t rank, std::string_view op) {
  int64_t r = static_cast<int64_t>(rank);
  int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) {
    return ffi::Unexpected<ffi::Error>(ArgError(
        op, "axis", "an axis in [-" + std::to_string(r) + ", " + std::to_string(r) + ")",
        std::to_string(axis)));
  }
  return a;
}

// The CUDA lowerings' optional last result: float32 scratch a tier keeps its partial results in (matmul's split-K
// decode tier, the norms' and softmax's split-axis tiers). XLA allocates it, so the call stays graph-capturable; the
// Python side sizes it and the launcher checks the size it gets.
inline ffi::ErrorOr<Workspace> TakeWorkspace(std::string_view op, const ffi::RemainingRets& extra,
                                             int64_t fixed_results) {
  if (extra.size() == 0) return Workspace{};
  if (extra.size() > 1)
    return ffi::Unexpected<ffi::Error>(ArgError(op, "results", "at most one workspace after the outputs",
                                                std::to_string(fixed_results + extra.size()) + " results"));
  auto ws = extra.get<ffi::AnyBuffer>(0);
  if (ws.has_error()) return ffi::Unexpected<ffi::Error>(ws.error());
  ffi::Result<ffi::AnyBuffer> w = *ws;
  if (w->element_type() != ffi::DataType::F32 || w->dimensions().size() != 1)
    return ffi::Unexpected<ffi::Error>(
        ArgError(op, "workspace", "a rank-1 float32 buffer",
                 std::string(DataTypeName(w->element_type())) + " shape " + ShapeString(w->dimensions())));
  return Workspace{w->untyped_data(), static_cast<int64_t>(w->size_bytes())};
}

}  // namespace jk

// Early return for the ffi::Error-valued checks above.
#define JK_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::xla::ffi::Error jk_err_ = (expr);           \
    if (jk_err_.failure()) return jk_err_;        \
  } while (0)

#ifdef JK_WITH_CUDA
#include <cuda_runtime_api.h>

#include <atomic>
namespace jk {
// Test hook (tests/test_reliability.py, through the module's capture_probe()): counts launches made while
// XLA was capturing the stream into a CUDA graph, i.e. from inside a command buffer. That is the direct
// evidence that a handler declared kCmdBufferCompatible is really captured and replayed; the compiled HLO
// no longer shows command buffers once XLA forms them from thunks. Off by default: one relaxed load.
inline std::atomic<bool> g_capture_probe{false};
inline std::atomic<int64_t> g_captured_launches{0};

// Turns a launcher's cudaError_t into an ffi::Error. cudaGetLastError inside a launcher may also report
// an earlier asynchronous failure of other work on the device; the message says which op noticed it.
inline ffi::Error CudaStatus(cudaStream_t stream, cudaError_t e, std::string_view op) {
  if (g_capture_probe.load(std::memory_order_relaxed)) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capture) == cudaSuccess && capture == cudaStreamCaptureStatusActive) {
      g_captured_launches.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (e == cudaSuccess) return ffi::Error::Success();
  std::string s(op);
  s.append(": CUDA error ").append(cudaGetErrorName(e)).append(": ").append(cudaGetErrorString(e));
  return ffi::Error::Internal(s);
}
}  // namespace jk
#endif
