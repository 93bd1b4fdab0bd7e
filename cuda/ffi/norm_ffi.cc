// FFI handlers of LayerNorm and RMSNorm, CPU and CUDA. The contract (jax_kernels/norms.py binds it):
//
//   jk_layer_norm        x, scale, bias -> y, mean, rstd          attrs epsilon: f32, axis: i64
//   jk_rms_norm          x, scale -> y                            attrs epsilon: f32, axis: i64
//   jk_layer_norm_stats  x -> mean, m2                            attrs axis: i64
//   jk_rms_norm_stats    x -> mean_square                         attrs axis: i64
//   jk_layer_norm_apply  x, mean, rstd, scale, bias -> y          attrs axis: i64
//   jk_rms_norm_apply    x, rstd, scale -> y                      attrs axis: i64
//
// x (float32/bfloat16/float16, rank >= 1) is viewed as (outer, n, inner) around `axis`; y has x's shape
// and dtype. scale/bias are absent (shape (0,)) or (G, n) of x's dtype with outer % G == 0: row group o
// uses parameter row o / (outer / G), so vmap over scale/bias stays one call. Statistics are float32 of
// x's shape without `axis`; the full op's mean/rstd may instead be (0,), and then are not written.
// m2 = sum((x - mean)^2) over the local n (for merging over devices); mean_square = mean(x^2).
// A normalised axis of length 0 gives NaN statistics (the mean of nothing), as jnp.mean does.
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "common/ffi_helpers.h"
#include "cpu/norm_cpu.h"
#include "ffi/targets.h"
#include "norm/norm_shape.h"
#ifdef JK_WITH_CUDA
#include "norm/norm_launch.h"
#endif

namespace jk {
namespace {

constexpr std::string_view kLayerNorm = "jk_layer_norm";
constexpr std::string_view kRmsNorm = "jk_rms_norm";
constexpr std::string_view kLayerNormStats = "jk_layer_norm_stats";
constexpr std::string_view kRmsNormStats = "jk_rms_norm_stats";
constexpr std::string_view kLayerNormApply = "jk_layer_norm_apply";
constexpr std::string_view kRmsNormApply = "jk_rms_norm_apply";

struct Geometry {
  DType dtype;
  NormShape shape;
  std::vector<int64_t> stat_dims;  // x's dims without the axis
};

ffi::ErrorOr<Geometry> CheckX(const ffi::AnyBuffer& x, int64_t axis, std::string_view op) {
  auto dt = FloatDType(x.element_type(), op, "x");
  if (dt.has_error()) return ffi::Unexpected<ffi::Error>(dt.error());
  const auto dims = x.dimensions();
  if (dims.size() == 0) return ffi::Unexpected<ffi::Error>(ArgError(op, "x", "rank >= 1", "a scalar"));
  auto ax = NormalizeAxis(axis, dims.size(), op);
  if (ax.has_error()) return ffi::Unexpected<ffi::Error>(ax.error());
  const size_t a = static_cast<size_t>(*ax);
  Geometry g{*dt, {}, {}};
  g.shape.outer = Product(dims, 0, a);
  g.shape.n = dims[a];
  g.shape.inner = Product(dims, a + 1);
  for (size_t i = 0; i < dims.size(); ++i)
    if (i != a) g.stat_dims.push_back(dims[i]);
  return g;
}

ffi::DataType ToDataType(DType t) {
  switch (t) {
    case DType::kF32: return ffi::DataType::F32;
    case DType::kBF16: return ffi::DataType::BF16;
    case DType::kF16: return ffi::DataType::F16;
  }
  return ffi::DataType::INVALID;
}

std::string ParamShapeString(const Geometry& g) {
  return "(0,) or (G, " + std::to_string(g.shape.n) + ") with G dividing " + std::to_string(g.shape.outer);
}

// An optional (G, n) affine parameter of x's dtype; sets *groups (1 when absent) and *present.
ffi::Error CheckParam(const ffi::AnyBuffer& p, std::string_view arg, const Geometry& g, std::string_view op,
                      int64_t* groups, bool* present) {
  *groups = 1;
  *present = false;
  if (IsAbsent(p) && g.shape.n != 0) return ffi::Error::Success();
  JK_RETURN_IF_ERROR(ExpectDType(p.element_type(), ToDataType(g.dtype), op, arg));
  const auto d = p.dimensions();
  if (IsAbsent(p)) return ffi::Error::Success();  // n == 0: nothing reads it
  if (d.size() != 2 || d[1] != g.shape.n || d[0] < 1 || g.shape.outer % d[0] != 0)
    return ArgError(op, arg, "shape " + ParamShapeString(g), ShapeString(d));
  *groups = d[0];
  *present = true;
  return ffi::Error::Success();
}

// A float32 statistics buffer of x's shape without the axis; `optional` also accepts (0,) (not written).
ffi::Error CheckStat(const ffi::AnyBuffer& s, std::string_view arg, const Geometry& g, std::string_view op,
                     bool optional, bool* present) {
  JK_RETURN_IF_ERROR(ExpectDType(s.element_type(), ffi::DataType::F32, op, arg));
  const ffi::Span<const int64_t> want(g.stat_dims.data(), g.stat_dims.size());
  *present = true;
  if (s.dimensions() == want) return ffi::Error::Success();
  if (optional && IsAbsent(s)) {
    *present = false;
    return ffi::Error::Success();
  }
  return ArgError(op, arg, std::string("float32 of shape ") + ShapeString(want) + (optional ? " or (0,)" : ""),
                  ShapeString(s.dimensions()));
}

ffi::Error CheckY(const ffi::AnyBuffer& y, const ffi::AnyBuffer& x, std::string_view op) {
  JK_RETURN_IF_ERROR(ExpectDType(y.element_type(), x.element_type(), op, "y"));
  if (y.dimensions() == x.dimensions()) return ffi::Error::Success();
  return ArgError(op, "y", "shape " + ShapeString(x.dimensions()), ShapeString(y.dimensions()));
}

ffi::Error CheckEpsilon(float epsilon, std::string_view op) {
  if (std::isfinite(epsilon) && epsilon >= 0.f) return ffi::Error::Success();
  return ArgError(op, "epsilon", "a finite value >= 0", std::to_string(epsilon));
}

void* DataOrNull(ffi::AnyBuffer& b, bool present) { return present ? b.untyped_data() : nullptr; }
float* StatOrNull(ffi::AnyBuffer& b, bool present) {
  return present ? static_cast<float*>(b.untyped_data()) : nullptr;
}

// ---- validation shared by CPU and CUDA ------------------------------------------------------------
struct LayerNormCall {
  Geometry g;
  const void* scale;
  const void* bias;
  float* mean;
  float* rstd;
};

ffi::ErrorOr<LayerNormCall> CheckLayerNorm(ffi::AnyBuffer& x, ffi::AnyBuffer& scale, ffi::AnyBuffer& bias,
                                           ffi::AnyBuffer& y, ffi::AnyBuffer& mean, ffi::AnyBuffer& rstd,
                                           float epsilon, int64_t axis) {
  auto g = CheckX(x, axis, kLayerNorm);
  if (g.has_error()) return ffi::Unexpected<ffi::Error>(g.error());
  bool has_scale, has_bias, has_mean, has_rstd;
  auto err = [](ffi::Error e) { return ffi::Unexpected<ffi::Error>(std::move(e)); };
  if (auto e = CheckParam(scale, "scale", *g, kLayerNorm, &g->shape.scale_groups, &has_scale); e.failure())
    return err(std::move(e));
  if (auto e = CheckParam(bias, "bias", *g, kLayerNorm, &g->shape.bias_groups, &has_bias); e.failure())
    return err(std::move(e));
  if (auto e = CheckY(y, x, kLayerNorm); e.failure()) return err(std::move(e));
  if (auto e = CheckStat(mean, "mean", *g, kLayerNorm, true, &has_mean); e.failure()) return err(std::move(e));
  if (auto e = CheckStat(rstd, "rstd", *g, kLayerNorm, true, &has_rstd); e.failure()) return err(std::move(e));
  if (has_mean != has_rstd)
    return err(ArgError(kLayerNorm, "rstd", "the same presence as 'mean'", ShapeString(rstd.dimensions())));
  if (auto e = CheckEpsilon(epsilon, kLayerNorm); e.failure()) return err(std::move(e));
  return LayerNormCall{*g, DataOrNull(scale, has_scale), DataOrNull(bias, has_bias), StatOrNull(mean, has_mean),
                       StatOrNull(rstd, has_rstd)};
}

struct RmsNormCall {
  Geometry g;
  const void* scale;
};

ffi::ErrorOr<RmsNormCall> CheckRmsNorm(ffi::AnyBuffer& x, ffi::AnyBuffer& scale, ffi::AnyBuffer& y,
                                       float epsilon, int64_t axis) {
  auto g = CheckX(x, axis, kRmsNorm);
  if (g.has_error()) return ffi::Unexpected<ffi::Error>(g.error());
  bool has_scale;
  auto err = [](ffi::Error e) { return ffi::Unexpected<ffi::Error>(std::move(e)); };
  if (auto e = CheckParam(scale, "scale", *g, kRmsNorm, &g->shape.scale_groups, &has_scale); e.failure())
    return err(std::move(e));
  if (auto e = CheckY(y, x, kRmsNorm); e.failure()) return err(std::move(e));
  if (auto e = CheckEpsilon(epsilon, kRmsNorm); e.failure()) return err(std::move(e));
  return RmsNormCall{*g, DataOrNull(scale, has_scale)};
}

// Stats: x and one or two required float32 outputs.
ffi::ErrorOr<Geometry> CheckStats(ffi::AnyBuffer& x, ffi::AnyBuffer& s0, std::string_view s0_name,
                                  ffi::AnyBuffer* s1, std::string_view s1_name, int64_t axis,
                                  std::string_view op) {
  auto g = CheckX(x, axis, op);
  if (g.has_error()) return g;
  bool present;
  if (auto e = CheckStat(s0, s0_name, *g, op, false, &present); e.failure())
    return ffi::Unexpected<ffi::Error>(std::move(e));
  if (s1 != nullptr)
    if (auto e = CheckStat(*s1, s1_name, *g, op, false, &present); e.failure())
      return ffi::Unexpected<ffi::Error>(std::move(e));
  return g;
}

// Apply: x, required statistics, optional parameters, y.
ffi::ErrorOr<Geometry> CheckApply(ffi::AnyBuffer& x, ffi::AnyBuffer* mean, ffi::AnyBuffer& rstd,
                                  ffi::AnyBuffer& scale, ffi::AnyBuffer* bias, ffi::AnyBuffer& y, int64_t axis,
                                  std::string_view op, const void** scale_ptr, const void** bias_ptr) {
  auto g = CheckX(x, axis, op);
  if (g.has_error()) return g;
  auto err = [](ffi::Error e) { return ffi::Unexpected<ffi::Error>(std::move(e)); };
  bool present;
  if (mean != nullptr)
    if (auto e = CheckStat(*mean, "mean", *g, op, false, &present); e.failure()) return err(std::move(e));
  if (auto e = CheckStat(rstd, "rstd", *g, op, false, &present); e.failure()) return err(std::move(e));
  if (auto e = CheckParam(scale, "scale", *g, op, &g->shape.scale_groups, &present); e.failure())
    return err(std::move(e));
  *scale_ptr = DataOrNull(scale, present);
  *bias_ptr = nullptr;
  if (bias != nullptr) {
    if (auto e = CheckParam(*bias, "bias", *g, op, &g->shape.bias_groups, &present); e.failure())
      return err(std::move(e));
    *bias_ptr = DataOrNull(*bias, present);
  }
  if (auto e = CheckY(y, x, op); e.failure()) return err(std::move(e));
  return g;
}

int64_t StatCount(const NormShape& s) { return s.outer * s.inner; }

// ---- CPU handlers -----------------------------------------------------------------------------------
ffi::Error LayerNormCpu(ffi::AnyBuffer x, ffi::AnyBuffer scale, ffi::AnyBuffer bias,
                        ffi::Result<ffi::AnyBuffer> y, ffi::Result<ffi::AnyBuffer> mean,
                        ffi::Result<ffi::AnyBuffer> rstd, float epsilon, int64_t axis) {
  auto c = CheckLayerNorm(x, scale, bias, *y, *mean, *rstd, epsilon, axis);
  if (c.has_error()) return c.error();
  cpu::LayerNorm(c->g.dtype, x.untyped_data(), c->scale, c->bias, y->untyped_data(), c->mean, c->rstd,
                 c->g.shape, epsilon);
  return ffi::Error::Success();
}

ffi::Error RmsNormCpu(ffi::AnyBuffer x, ffi::AnyBuffer scale, ffi::Result<ffi::AnyBuffer> y, float epsilon,
                      int64_t axis) {
  auto c = CheckRmsNorm(x, scale, *y, epsilon, axis);
  if (c.has_error()) return c.error();
  cpu::RmsNorm(c->g.dtype, x.untyped_data(), c->scale, y->untyped_data(), c->g.shape, epsilon);
  return ffi::Error::Success();
}

ffi::Error LayerNormStatsCpu(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> mean, ffi::Result<ffi::AnyBuffer> m2,
                             int64_t axis) {
  auto g = CheckStats(x, *mean, "mean", &*m2, "m2", axis, kLayerNormStats);
  if (g.has_error()) return g.error();
  cpu::LayerNormStats(g->dtype, x.untyped_data(), StatOrNull(*mean, true), StatOrNull(*m2, true), g->shape);
  return ffi::Error::Success();
}

ffi::Error RmsNormStatsCpu(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> ms, int64_t axis) {
  auto g = CheckStats(x, *ms, "mean_square", nullptr, "", axis, kRmsNormStats);
  if (g.has_error()) return g.error();
  cpu::RmsNormStats(g->dtype, x.untyped_data(), StatOrNull(*ms, true), g->shape);
  return ffi::Error::Success();
}

ffi::Error LayerNormApplyCpu(ffi::AnyBuffer x, ffi::AnyBuffer mean, ffi::AnyBuffer rstd, ffi::AnyBuffer scale,
                             ffi::AnyBuffer bias, ffi::Result<ffi::AnyBuffer> y, int64_t axis) {
  const void *s, *b;
  auto g = CheckApply(x, &mean, rstd, scale, &bias, *y, axis, kLayerNormApply, &s, &b);
  if (g.has_error()) return g.error();
  cpu::LayerNormApply(g->dtype, x.untyped_data(), StatOrNull(mean, true), StatOrNull(rstd, true), s, b,
                      y->untyped_data(), g->shape);
  return ffi::Error::Success();
}

ffi::Error RmsNormApplyCpu(ffi::AnyBuffer x, ffi::AnyBuffer rstd, ffi::AnyBuffer scale,
                           ffi::Result<ffi::AnyBuffer> y, int64_t axis) {
  const void *s, *b;
  auto g = CheckApply(x, nullptr, rstd, scale, nullptr, *y, axis, kRmsNormApply, &s, &b);
  if (g.has_error()) return g.error();
  cpu::RmsNormApply(g->dtype, x.untyped_data(), StatOrNull(rstd, true), s, y->untyped_data(), g->shape);
  return ffi::Error::Success();
}

// ---- CUDA handlers ----------------------------------------------------------------------------------
#ifdef JK_WITH_CUDA
// A zero-length axis: y is empty and the statistics are NaN (all-ones bytes are a float32 NaN). A memset
// node is fine inside a CUDA graph.
ffi::Error FillNaN(cudaStream_t stream, float* p, int64_t count, std::string_view op) {
  if (p == nullptr || count == 0) return ffi::Error::Success();
  return CudaStatus(stream, cudaMemsetAsync(p, 0xff, static_cast<size_t>(count) * sizeof(float), stream), op);
}

ffi::Error LayerNormCuda(cudaStream_t stream, ffi::AnyBuffer x, ffi::AnyBuffer scale, ffi::AnyBuffer bias,
                         ffi::Result<ffi::AnyBuffer> y, ffi::Result<ffi::AnyBuffer> mean,
                         ffi::Result<ffi::AnyBuffer> rstd, ffi::RemainingRets extra, float epsilon, int64_t axis) {
  auto c = CheckLayerNorm(x, scale, bias, *y, *mean, *rstd, epsilon, axis);
  if (c.has_error()) return c.error();
  auto ws = TakeWorkspace(kLayerNorm, extra, 3);  // the split-axis tier's (norm_split.cuh)
  if (ws.has_error()) return ws.error();
  if (c->g.shape.n == 0) {
    JK_RETURN_IF_ERROR(FillNaN(stream, c->mean, StatCount(c->g.shape), kLayerNorm));
    return FillNaN(stream, c->rstd, StatCount(c->g.shape), kLayerNorm);
  }
  const cudaError_t e = LaunchLayerNorm(stream, c->g.dtype, x.untyped_data(), c->scale, c->bias,
                                        y->untyped_data(), c->mean, c->rstd, c->g.shape, epsilon, *ws);
  return CudaStatus(stream, e, kLayerNorm);
}

ffi::Error RmsNormCuda(cudaStream_t stream, ffi::AnyBuffer x, ffi::AnyBuffer scale, ffi::Result<ffi::AnyBuffer> y,
                       ffi::RemainingRets extra, float epsilon, int64_t axis) {
  auto c = CheckRmsNorm(x, scale, *y, epsilon, axis);
  if (c.has_error()) return c.error();
  auto ws = TakeWorkspace(kRmsNorm, extra, 1);
  if (ws.has_error()) return ws.error();
  const cudaError_t e = LaunchRmsNorm(stream, c->g.dtype, x.untyped_data(), c->scale, y->untyped_data(),
                                      c->g.shape, epsilon, *ws);
  return CudaStatus(stream, e, kRmsNorm);
}

ffi::Error LayerNormStatsCuda(cudaStream_t stream, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> mean,
                              ffi::Result<ffi::AnyBuffer> m2, int64_t axis) {
  auto g = CheckStats(x, *mean, "mean", &*m2, "m2", axis, kLayerNormStats);
  if (g.has_error()) return g.error();
  if (g->shape.n == 0) {
    JK_RETURN_IF_ERROR(FillNaN(stream, StatOrNull(*mean, true), StatCount(g->shape), kLayerNormStats));
    return FillNaN(stream, StatOrNull(*m2, true), StatCount(g->shape), kLayerNormStats);
  }
  const cudaError_t e = LaunchLayerNormStats(stream, g->dtype, x.untyped_data(), StatOrNull(*mean, true),
                                             StatOrNull(*m2, true), g->shape);
  return CudaStatus(stream, e, kLayerNormStats);
}

ffi::Error RmsNormStatsCuda(cudaStream_t stream, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> ms, int64_t axis) {
  auto g = CheckStats(x, *ms, "mean_square", nullptr, "", axis, kRmsNormStats);
  if (g.has_error()) return g.error();
  if (g->shape.n == 0) return FillNaN(stream, StatOrNull(*ms, true), StatCount(g->shape), kRmsNormStats);
  const cudaError_t e = LaunchRmsNormStats(stream, g->dtype, x.untyped_data(), StatOrNull(*ms, true),
                                           g->shape);
  return CudaStatus(stream, e, kRmsNormStats);
}

ffi::Error LayerNormApplyCuda(cudaStream_t stream, ffi::AnyBuffer x, ffi::AnyBuffer mean, ffi::AnyBuffer rstd,
                              ffi::AnyBuffer scale, ffi::AnyBuffer bias, ffi::Result<ffi::AnyBuffer> y,
                              int64_t axis) {
  const void *s, *b;
  auto g = CheckApply(x, &mean, rstd, scale, &bias, *y, axis, kLayerNormApply, &s, &b);
  if (g.has_error()) return g.error();
  const cudaError_t e = LaunchLayerNormApply(stream, g->dtype, x.untyped_data(), StatOrNull(mean, true),
                                             StatOrNull(rstd, true), s, b, y->untyped_data(), g->shape);
  return CudaStatus(stream, e, kLayerNormApply);
}

ffi::Error RmsNormApplyCuda(cudaStream_t stream, ffi::AnyBuffer x, ffi::AnyBuffer rstd, ffi::AnyBuffer scale,
                            ffi::Result<ffi::AnyBuffer> y, int64_t axis) {
  const void *s, *b;
  auto g = CheckApply(x, nullptr, rstd, scale, nullptr, *y, axis, kRmsNormApply, &s, &b);
  if (g.has_error()) return g.error();
  const cudaError_t e = LaunchRmsNormApply(stream, g->dtype, x.untyped_data(), StatOrNull(rstd, true), s,
                                           y->untyped_data(), g->shape);
  return CudaStatus(stream, e, kRmsNormApply);
}
#endif  // JK_WITH_CUDA

}  // namespace

// Bindings: one function per signature, applied to Bind() on CPU and to Bind().Ctx<stream>() on CUDA.
// kWorkspace: the CUDA handlers take an optional workspace result after the outputs (TakeWorkspace). (A Binding
// cannot be passed through a helper: its move constructor is private; each chain is built in place.)
template <bool kWorkspace = false, typename B>
auto LayerNormBinding(B b) {
  auto outputs = std::move(b).template Arg<ffi::AnyBuffer>()  // x
                     .template Arg<ffi::AnyBuffer>()           // scale: (G, n) or (0,)
                     .template Arg<ffi::AnyBuffer>()           // bias: (G, n) or (0,)
                     .template Ret<ffi::AnyBuffer>()           // y
                     .template Ret<ffi::AnyBuffer>()           // mean: x.shape without axis, or (0,)
                     .template Ret<ffi::AnyBuffer>();          // rstd: likewise
  if constexpr (kWorkspace)
    return std::move(outputs).RemainingRets().template Attr<float>("epsilon").template Attr<int64_t>("axis");
  else
    return std::move(outputs).template Attr<float>("epsilon").template Attr<int64_t>("axis");
}
template <bool kWorkspace = false, typename B>
auto RmsNormBinding(B b) {
  auto outputs = std::move(b).template Arg<ffi::AnyBuffer>()  // x
                     .template Arg<ffi::AnyBuffer>()           // scale: (G, n) or (0,)
                     .template Ret<ffi::AnyBuffer>();          // y
  if constexpr (kWorkspace)
    return std::move(outputs).RemainingRets().template Attr<float>("epsilon").template Attr<int64_t>("axis");
  else
    return std::move(outputs).template Attr<float>("epsilon").template Attr<int64_t>("axis");
}
template <typename B>
auto LayerNormStatsBinding(B b) {
  return std::move(b).template Arg<ffi::AnyBuffer>()  // x
      .template Ret<ffi::AnyBuffer>()        // mean
      .template Ret<ffi::AnyBuffer>()        // m2
      .template Attr<int64_t>("axis");
}
template <typename B>
auto RmsNormStatsBinding(B b) {
  return std::move(b).template Arg<ffi::AnyBuffer>()  // x
      .template Ret<ffi::AnyBuffer>()        // mean_square
      .template Attr<int64_t>("axis");
}
template <typename B>
auto LayerNormApplyBinding(B b) {
  return std::move(b).template Arg<ffi::AnyBuffer>()  // x
      .template Arg<ffi::AnyBuffer>()        // mean
      .template Arg<ffi::AnyBuffer>()        // rstd
      .template Arg<ffi::AnyBuffer>()        // scale: (G, n) or (0,)
      .template Arg<ffi::AnyBuffer>()        // bias: (G, n) or (0,)
      .template Ret<ffi::AnyBuffer>()        // y
      .template Attr<int64_t>("axis");
}
template <typename B>
auto RmsNormApplyBinding(B b) {
  return std::move(b).template Arg<ffi::AnyBuffer>()  // x
      .template Arg<ffi::AnyBuffer>()        // rstd
      .template Arg<ffi::AnyBuffer>()        // scale: (G, n) or (0,)
      .template Ret<ffi::AnyBuffer>()        // y
      .template Attr<int64_t>("axis");
}

XLA_FFI_DEFINE_HANDLER(kLayerNormCpu, LayerNormCpu, LayerNormBinding(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER(kRmsNormCpu, RmsNormCpu, RmsNormBinding(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER(kLayerNormStatsCpu, LayerNormStatsCpu, LayerNormStatsBinding(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER(kRmsNormStatsCpu, RmsNormStatsCpu, RmsNormStatsBinding(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER(kLayerNormApplyCpu, LayerNormApplyCpu, LayerNormApplyBinding(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER(kRmsNormApplyCpu, RmsNormApplyCpu, RmsNormApplyBinding(ffi::Ffi::Bind()));

#ifdef JK_WITH_CUDA
// XLA's stream: launch only on it. Every CUDA handler is graph-safe (the same kernels every call, no
// allocation, no synchronisation, attribute queries only on the host), so each declares it.
#define JK_NORM_CUDA_BIND ffi::Ffi::Bind().Ctx<ffi::PlatformStream<cudaStream_t>>()
XLA_FFI_DEFINE_HANDLER(kLayerNormCuda, LayerNormCuda, LayerNormBinding<true>(JK_NORM_CUDA_BIND),
                       {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER(kRmsNormCuda, RmsNormCuda, RmsNormBinding<true>(JK_NORM_CUDA_BIND),
                       {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER(kLayerNormStatsCuda, LayerNormStatsCuda, LayerNormStatsBinding(JK_NORM_CUDA_BIND),
                       {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER(kRmsNormStatsCuda, RmsNormStatsCuda, RmsNormStatsBinding(JK_NORM_CUDA_BIND),
                       {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER(kLayerNormApplyCuda, LayerNormApplyCuda, LayerNormApplyBinding(JK_NORM_CUDA_BIND),
                       {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER(kRmsNormApplyCuda, RmsNormApplyCuda, RmsNormApplyBinding(JK_NORM_CUDA_BIND),
                       {ffi::Traits::kCmdBufferCompatible});
#undef JK_NORM_CUDA_BIND
#endif

void AddNormTargets(TargetList& t) {
  t.push_back({"jk_layer_norm", kLayerNormCpu, JK_CUDA_HANDLER(kLayerNormCuda)});
  t.push_back({"jk_rms_norm", kRmsNormCpu, JK_CUDA_HANDLER(kRmsNormCuda)});
  t.push_back({"jk_layer_norm_stats", kLayerNormStatsCpu, JK_CUDA_HANDLER(kLayerNormStatsCuda)});
  t.push_back({"jk_rms_norm_stats", kRmsNormStatsCpu, JK_CUDA_HANDLER(kRmsNormStatsCuda)});
  t.push_back({"jk_layer_norm_apply", kLayerNormApplyCpu, JK_CUDA_HANDLER(kLayerNormApplyCuda)});
  t.push_back({"jk_rms_norm_apply", kRmsNormApplyCpu, JK_CUDA_HANDLER(kRmsNormApplyCuda)});
}

}  // namespace jk
