// FFI handlers of the softmax family. Targets (CPU and CUDA, same names):
//   jk_softmax, jk_log_softmax     (x, mask) -> y
//   jk_softmax_stats               (x, mask) -> (row_max, row_sum)   float32, x's shape without the axis:
//                                  max over the live entries and sum of exp(x - max) (-inf and 0 for a row
//                                  with no live entry). For sharding along the axis: the caller combines
//                                  the shards' partials into the global max and sum.
//   jk_softmax_apply, jk_log_softmax_apply   (x, mask, row_max, row_sum) -> y from given statistics.
// Attribute: axis (int64, may be negative). x: float32/bfloat16/float16 of rank >= 1; y: x's dtype and shape.
// mask: bool of x's rank with every dim equal to x's or 1 (kept broadcast: never expanded), or a (0,) array
// of any dtype when absent.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/ffi_helpers.h"
#include "cpu/softmax_cpu.h"
#include "ffi/targets.h"
#include "softmax/softmax_launch.h"

namespace jk {
namespace {

constexpr std::string_view kSoftmax = "jk_softmax";
constexpr std::string_view kLogSoftmax = "jk_log_softmax";
constexpr std::string_view kStats = "jk_softmax_stats";
constexpr std::string_view kApply = "jk_softmax_apply";
constexpr std::string_view kLogApply = "jk_log_softmax_apply";

struct SoftmaxGeometry {
  DType dtype;
  int64_t outer, n, inner;
  bool empty;  // x has no elements
  MaskIndex mask;
};

// Appends a dim (outermost first) to a mask index map, merging it into the previous one when both are
// broadcast or they are contiguous, so typical masks need one or two dims.
bool PushDim(BroadcastDims& d, int64_t size, int64_t stride) {
  if (size == 1) return true;
  if (d.rank > 0 && d.stride[d.rank - 1] == stride * size) {
    d.size[d.rank - 1] *= size;
    d.stride[d.rank - 1] = stride;
    return true;
  }
  if (d.rank == BroadcastDims::kMaxDims) return false;
  d.size[d.rank] = size;
  d.stride[d.rank] = stride;
  ++d.rank;
  return true;
}

// Validation shared by every handler: x's dtype and rank, the axis, and the mask's dtype and dims.
ffi::ErrorOr<SoftmaxGeometry> CheckSoftmax(std::string_view op, const ffi::AnyBuffer& x, const ffi::AnyBuffer& mask,
                                           int64_t axis) {
  auto dt = FloatDType(x.element_type(), op, "x");
  if (dt.has_error()) return ffi::Unexpected<ffi::Error>(dt.error());
  const auto xd = x.dimensions();
  if (xd.size() == 0) return ffi::Unexpected<ffi::Error>(ArgError(op, "x", "an array of rank >= 1", "a scalar"));
  auto ax = NormalizeAxis(axis, xd.size(), op);
  if (ax.has_error()) return ffi::Unexpected<ffi::Error>(ax.error());
  const size_t a = static_cast<size_t>(*ax);
  SoftmaxGeometry g{*dt, Product(xd, 0, a), xd[a], Product(xd, a + 1), x.element_count() == 0, MaskIndex{}};

  const auto md = mask.dimensions();
  if (mask.element_count() == 0 && md.size() == 1 && md[0] == 0) return g;  // no mask
  // Messages are built only on failure: the success path must not format strings (std::ostringstream
  // inside a CUDA handler crashed the process on the GPU machine's build; see the report).
  auto not_broadcastable = [&] {
    return ffi::Unexpected<ffi::Error>(ArgError(op, "mask",
                                                "a shape of rank " + std::to_string(xd.size()) +
                                                    " with every dim equal to x's " + ShapeString(xd) + " or 1",
                                                ShapeString(md)));
  };
  if (ffi::Error e = ExpectDType(mask.element_type(), ffi::DataType::PRED, op, "mask"); e.failure())
    return ffi::Unexpected<ffi::Error>(std::move(e));
  if (md.size() != xd.size()) return not_broadcastable();
  for (size_t k = 0; k < xd.size(); ++k) {
    if (md[k] != xd[k] && md[k] != 1) return not_broadcastable();
  }
  // Row-major strides of the mask, 0 on its broadcast dims.
  std::vector<int64_t> stride(xd.size());
  int64_t st = 1;
  for (size_t k = xd.size(); k-- > 0;) {
    stride[k] = md[k] == 1 ? 0 : st;
    st *= md[k];
  }
  MaskIndex& m = g.mask;
  m.data = static_cast<const uint8_t*>(mask.untyped_data());
  m.axis_stride = stride[a];
  bool ok = true;
  for (size_t k = 0; k < a; ++k) ok = ok && PushDim(m.outer, xd[k], stride[k]);
  for (size_t k = a + 1; k < xd.size(); ++k) ok = ok && PushDim(m.inner, xd[k], stride[k]);
  if (!ok) {
    return ffi::Unexpected<ffi::Error>(ArgError(
        op, "mask", "at most 8 alternations of broadcast and full dims on each side of the axis", ShapeString(md)));
  }
  return g;
}

ffi::Error CheckSameAsX(std::string_view op, std::string_view arg, const ffi::AnyBuffer& x,
                        const ffi::AnyBuffer& b) {
  JK_RETURN_IF_ERROR(ExpectDType(b.element_type(), x.element_type(), op, arg));
  return ExpectShape(b.dimensions(), x.dimensions(), op, arg);
}

// Statistics buffers: float32, x's shape without the axis.
ffi::Error CheckStatsBuffer(std::string_view op, std::string_view arg, const ffi::AnyBuffer& x, int64_t axis,
                            const ffi::AnyBuffer& b) {
  JK_RETURN_IF_ERROR(ExpectDType(b.element_type(), ffi::DataType::F32, op, arg));
  const auto xd = x.dimensions();
  const size_t a = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(xd.size()) : axis);
  std::vector<int64_t> expected;
  for (size_t k = 0; k < xd.size(); ++k)
    if (k != a) expected.push_back(xd[k]);
  return ExpectShape(b.dimensions(), ffi::Span<const int64_t>(expected.data(), expected.size()), op, arg);
}

constexpr std::string_view SoftmaxName(bool log) { return log ? kLogSoftmax : kSoftmax; }
constexpr std::string_view ApplyName(bool log) { return log ? kLogApply : kApply; }

// ---- CPU ------------------------------------------------------------------------------------------
template <bool kLog>
ffi::Error SoftmaxCpu(ffi::AnyBuffer x, ffi::AnyBuffer mask, ffi::Result<ffi::AnyBuffer> y, int64_t axis) {
  constexpr std::string_view op = SoftmaxName(kLog);
  auto g = CheckSoftmax(op, x, mask, axis);
  if (g.has_error()) return g.error();
  JK_RETURN_IF_ERROR(CheckSameAsX(op, "y", x, *y));
  if (g->empty) return ffi::Error::Success();
  cpu::Softmax(g->dtype, x.untyped_data(), y->untyped_data(), g->outer, g->n, g->inner, g->mask, kLog);
  return ffi::Error::Success();
}

ffi::Error StatsCpu(ffi::AnyBuffer x, ffi::AnyBuffer mask, ffi::Result<ffi::AnyBuffer> row_max,
                    ffi::Result<ffi::AnyBuffer> row_sum, int64_t axis) {
  auto g = CheckSoftmax(kStats, x, mask, axis);
  if (g.has_error()) return g.error();
  JK_RETURN_IF_ERROR(CheckStatsBuffer(kStats, "row_max", x, axis, *row_max));
  JK_RETURN_IF_ERROR(CheckStatsBuffer(kStats, "row_sum", x, axis, *row_sum));
  if (row_max->element_count() == 0) return ffi::Error::Success();  // n == 0 still writes (-inf, 0)
  cpu::SoftmaxStats(g->dtype, x.untyped_data(), static_cast<float*>(row_max->untyped_data()),
                    static_cast<float*>(row_sum->untyped_data()), g->outer, g->n, g->inner, g->mask);
  return ffi::Error::Success();
}

template <bool kLog>
ffi::Error ApplyCpu(ffi::AnyBuffer x, ffi::AnyBuffer mask, ffi::AnyBuffer row_max, ffi::AnyBuffer row_sum,
                    ffi::Result<ffi::AnyBuffer> y, int64_t axis) {
  constexpr std::string_view op = ApplyName(kLog);
  auto g = CheckSoftmax(op, x, mask, axis);
  if (g.has_error()) return g.error();
  JK_RETURN_IF_ERROR(CheckStatsBuffer(op, "row_max", x, axis, row_max));
  JK_RETURN_IF_ERROR(CheckStatsBuffer(op, "row_sum", x, axis, row_sum));
  JK_RETURN_IF_ERROR(CheckSameAsX(op, "y", x, *y));
  if (g->empty) return ffi::Error::Success();
  cpu::SoftmaxApply(g->dtype, x.untyped_data(), static_cast<const float*>(row_max.untyped_data()),
                    static_cast<const float*>(row_sum.untyped_data()), y->untyped_data(), g->outer, g->n, g->inner,
                    g->mask, kLog);
  return ffi::Error::Success();
}

// ---- CUDA: the same checks, then one launch on XLA's stream; zero-size never launches -------------
#ifdef JK_WITH_CUDA
template <bool kLog>
ffi::Error SoftmaxCuda(cudaStream_t stream, ffi::AnyBuffer x, ffi::AnyBuffer mask, ffi::Result<ffi::AnyBuffer> y,
                       ffi::RemainingRets extra, int64_t axis) {
  constexpr std::string_view op = SoftmaxName(kLog);
  auto g = CheckSoftmax(op, x, mask, axis);
  if (g.has_error()) return g.error();
  JK_RETURN_IF_ERROR(CheckSameAsX(op, "y", x, *y));
  auto ws = TakeWorkspace(op, extra, 1);  // the split-axis tier's (softmax_split.cuh)
  if (ws.has_error()) return ws.error();
  if (g->empty) return ffi::Error::Success();
  const cudaError_t e = LaunchSoftmax(stream, g->dtype, x.untyped_data(), y->untyped_data(), g->outer, g->n,
                                      g->inner, g->mask, kLog, *ws);
  return CudaStatus(stream, e, op);
}

ffi::Error StatsCuda(cudaStream_t stream, ffi::AnyBuffer x, ffi::AnyBuffer mask, ffi::Result<ffi::AnyBuffer> row_max,
                     ffi::Result<ffi::AnyBuffer> row_sum, int64_t axis) {
  auto g = CheckSoftmax(kStats, x, mask, axis);
  if (g.has_error()) return g.error();
  JK_RETURN_IF_ERROR(CheckStatsBuffer(kStats, "row_max", x, axis, *row_max));
  JK_RETURN_IF_ERROR(CheckStatsBuffer(kStats, "row_sum", x, axis, *row_sum));
  if (row_max->element_count() == 0) return ffi::Error::Success();
  const cudaError_t e = LaunchSoftmaxStats(stream, g->dtype, x.untyped_data(),
                                           static_cast<float*>(row_max->untyped_data()),
                                           static_cast<float*>(row_sum->untyped_data()), g->outer, g->n,
                                           g->inner, g->mask);
  return CudaStatus(stream, e, kStats);
}

template <bool kLog>
ffi::Error ApplyCuda(cudaStream_t stream, ffi::AnyBuffer x, ffi::AnyBuffer mask, ffi::AnyBuffer row_max,
                     ffi::AnyBuffer row_sum, ffi::Result<ffi::AnyBuffer> y, int64_t axis) {
  constexpr std::string_view op = ApplyName(kLog);
  auto g = CheckSoftmax(op, x, mask, axis);
  if (g.has_error()) return g.error();
  JK_RETURN_IF_ERROR(CheckStatsBuffer(op, "row_max", x, axis, row_max));
  JK_RETURN_IF_ERROR(CheckStatsBuffer(op, "row_sum", x, axis, row_sum));
  JK_RETURN_IF_ERROR(CheckSameAsX(op, "y", x, *y));
  if (g->empty) return ffi::Error::Success();
  const cudaError_t e = LaunchSoftmaxApply(stream, g->dtype, x.untyped_data(),
                                           static_cast<const float*>(row_max.untyped_data()),
                                           static_cast<const float*>(row_sum.untyped_data()),
                                           y->untyped_data(), g->outer, g->n, g->inner, g->mask, kLog);
  return CudaStatus(stream, e, op);
}
#endif

}  // namespace

// The three argument lists, each shared by its CPU and CUDA handlers (a CUDA binding starts with the
// stream) and by the softmax and log-softmax variants.
// kWorkspace: the CUDA handlers take an optional workspace result after y (TakeWorkspace; a Binding cannot pass
// through a helper, so each chain is built in place).
template <bool kWorkspace = false, typename B>
auto SoftmaxArgs(B b) {
  auto outputs = std::move(b).template Arg<ffi::AnyBuffer>()  // x
                     .template Arg<ffi::AnyBuffer>()           // mask: bool, x's rank, dims x's or 1; or (0,)
                     .template Ret<ffi::AnyBuffer>();          // y
  if constexpr (kWorkspace) return std::move(outputs).RemainingRets().template Attr<int64_t>("axis");
  else return std::move(outputs).template Attr<int64_t>("axis");
}
template <typename B>
auto StatsArgs(B b) {
  return std::move(b).template Arg<ffi::AnyBuffer>()      // x
      .template Arg<ffi::AnyBuffer>()                     // mask
      .template Ret<ffi::AnyBuffer>()                     // row_max
      .template Ret<ffi::AnyBuffer>()                     // row_sum
      .template Attr<int64_t>("axis");
}
template <typename B>
auto ApplyArgs(B b) {
  return std::move(b).template Arg<ffi::AnyBuffer>()      // x
      .template Arg<ffi::AnyBuffer>()                     // mask
      .template Arg<ffi::AnyBuffer>()                     // row_max
      .template Arg<ffi::AnyBuffer>()                     // row_sum
      .template Ret<ffi::AnyBuffer>()                     // y
      .template Attr<int64_t>("axis");
}

XLA_FFI_DEFINE_HANDLER(kSoftmaxCpu, SoftmaxCpu<false>, SoftmaxArgs(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER(kLogSoftmaxCpu, SoftmaxCpu<true>, SoftmaxArgs(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER(kStatsCpu, StatsCpu, StatsArgs(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER(kApplyCpu, ApplyCpu<false>, ApplyArgs(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER(kLogApplyCpu, ApplyCpu<true>, ApplyArgs(ffi::Ffi::Bind()));

#ifdef JK_WITH_CUDA
// Graph-safe: the same launches on XLA's stream every call, no allocation, no synchronisation.
auto CudaBind() { return ffi::Ffi::Bind().Ctx<ffi::PlatformStream<cudaStream_t>>(); }
XLA_FFI_DEFINE_HANDLER(kSoftmaxCuda, SoftmaxCuda<false>, SoftmaxArgs<true>(CudaBind()),
                       {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER(kLogSoftmaxCuda, SoftmaxCuda<true>, SoftmaxArgs<true>(CudaBind()),
                       {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER(kStatsCuda, StatsCuda, StatsArgs(CudaBind()), {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER(kApplyCuda, ApplyCuda<false>, ApplyArgs(CudaBind()),
                       {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER(kLogApplyCuda, ApplyCuda<true>, ApplyArgs(CudaBind()),
                       {ffi::Traits::kCmdBufferCompatible});
#endif

void AddSoftmaxTargets(TargetList& t) {
  t.push_back({"jk_softmax", kSoftmaxCpu, JK_CUDA_HANDLER(kSoftmaxCuda)});
  t.push_back({"jk_log_softmax", kLogSoftmaxCpu, JK_CUDA_HANDLER(kLogSoftmaxCuda)});
  t.push_back({"jk_softmax_stats", kStatsCpu, JK_CUDA_HANDLER(kStatsCuda)});
  t.push_back({"jk_softmax_apply", kApplyCpu, JK_CUDA_HANDLER(kApplyCuda)});
  t.push_back({"jk_log_softmax_apply", kLogApplyCpu, JK_CUDA_HANDLER(kLogApplyCuda)});
}

}  // namespace jk
