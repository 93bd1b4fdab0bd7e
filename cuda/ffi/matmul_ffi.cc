// jk_matmul and jk_linear: one validation and one geometry builder shared by the CPU and CUDA handlers
// of both targets.
//
// FFI contract (jax_kernels/matmul.py builds it):
//   a        (batch..., M, K)
//   b        (batch..., K, N)
//   bias     jk_linear only: (batch..., 1, N), or the absent marker: a rank-1 array of size 0
//   residual jk_linear only: (batch..., M or 1, N or 1), or the absent marker
//   out      (batch..., M, N)
// All present operands have the same rank R >= 2 (Python left-pads with 1s) and dtype; every batch dim
// of an operand equals the output's or is 1 (broadcast through a 0 stride, never materialised).
// Attributes: precision (int64: 0 default, 1 high, 2 highest), activation (int64, jk_linear only).
#include <string>
#include <string_view>

#include "common/ffi_helpers.h"
#include "cpu/matmul_cpu.h"
#include "ffi/targets.h"
#include "matmul/matmul_problem.h"
#ifdef JK_WITH_CUDA
#include "matmul/matmul_launch.h"
#endif

namespace jk {
namespace {

constexpr std::string_view kMatmul = "jk_matmul";
constexpr std::string_view kLinear = "jk_linear";

// Element strides of a contiguous row-major array, with 0 for size-1 dims (they broadcast).
void BroadcastStrides(ffi::Span<const int64_t> dims, int64_t* strides) {
  int64_t s = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    strides[i] = dims[i] == 1 ? 0 : s;
    s *= dims[i];
  }
}

// Checks that x (rank R) has batch dims broadcastable to `out`'s and trailing dims in the given sets.
ffi::Error CheckOperand(std::string_view op, std::string_view arg, const ffi::AnyBuffer& x, DType dt,
                        ffi::Span<const int64_t> out, int64_t rows, bool rows_may_be_1, int64_t cols,
                        bool cols_may_be_1) {
  auto xdt = FloatDType(x.element_type(), op, arg);
  if (xdt.has_error()) return xdt.error();
  if (*xdt != dt) return ArgError(op, arg, std::string("dtype ") + DTypeName(dt), DTypeName(*xdt));
  auto d = x.dimensions();
  const size_t r = out.size();
  bool ok = d.size() == r;
  for (size_t i = 0; ok && i + 2 < r; ++i) ok = d[i] == out[i] || d[i] == 1;
  ok = ok && (d[r - 2] == rows || (rows_may_be_1 && d[r - 2] == 1)) &&
       (d[r - 1] == cols || (cols_may_be_1 && d[r - 1] == 1));
  if (ok) return ffi::Error::Success();
  return ArgError(op, arg,
                  "rank " + std::to_string(r) + " with batch dims 1 or those of " + ShapeString(out) +
                      " and trailing dims (" + std::to_string(rows) + (rows_may_be_1 ? " or 1" : "") + ", " +
                      std::to_string(cols) + (cols_may_be_1 ? " or 1" : "") + ")",
                  "shape " + ShapeString(d));
}

// Validates every buffer and attribute, then describes the problem with coalesced batch dims.
// bias / residual are null for jk_matmul.
ffi::Error BuildProblem(std::string_view op, const ffi::AnyBuffer& a, const ffi::AnyBuffer& b,
                        const ffi::AnyBuffer* bias, const ffi::AnyBuffer* residual, ffi::AnyBuffer& out,
                        int64_t precision, int64_t activation, MatmulProblem& p) {
  auto dt = FloatDType(a.element_type(), op, "a");
  if (dt.has_error()) return dt.error();
  p.dtype = *dt;
  auto ad = a.dimensions(), bd = b.dimensions(), od = out.dimensions();
  const size_t r = ad.size();
  if (r < 2) return ArgError(op, "a", "rank >= 2", "shape " + ShapeString(ad));
  if (precision < 0 || precision > 2)
    return ArgError(op, "precision", "0 (default), 1 (high) or 2 (highest)", std::to_string(precision));
  if (activation < 0 || activation >= kNumActivations)
    return ArgError(op, "activation", "an activation code in [0, 5)", std::to_string(activation));
  p.precision = static_cast<MatmulPrecision>(precision);
  p.activation = static_cast<Activation>(activation);
  p.m = ad[r - 2];
  p.k = ad[r - 1];
  if (bd.size() != r)
    return ArgError(op, "b", "rank " + std::to_string(r) + " (the rank of 'a')", "shape " + ShapeString(bd));
  if (bd[r - 2] != p.k)
    return ArgError(op, "b", "contraction dim " + std::to_string(p.k) + " (a's last dim)",
                        "shape " + ShapeString(bd));
  p.n = bd[r - 1];
  // The output decides the batch shape; every operand's batch dim is the output's or 1.
  if (od.size() != r) return ArgError(op, "out", "rank " + std::to_string(r), "shape " + ShapeString(od));
  if (od[r - 2] != p.m || od[r - 1] != p.n)
    return ArgError(op, "out", "trailing dims (" + std::to_string(p.m) + ", " + std::to_string(p.n) + ")",
                        "shape " + ShapeString(od));
  JK_RETURN_IF_ERROR(CheckOperand(op, "a", a, p.dtype, od, p.m, false, p.k, false));
  JK_RETURN_IF_ERROR(CheckOperand(op, "b", b, p.dtype, od, p.k, false, p.n, false));
  JK_RETURN_IF_ERROR(CheckOperand(op, "out", out, p.dtype, od, p.m, false, p.n, false));
  const bool has_bias = bias && !IsAbsent(*bias), has_res = residual && !IsAbsent(*residual);
  if (has_bias) JK_RETURN_IF_ERROR(CheckOperand(op, "bias", *bias, p.dtype, od, 1, false, p.n, false));
  if (has_res) JK_RETURN_IF_ERROR(CheckOperand(op, "residual", *residual, p.dtype, od, p.m, true, p.n, true));

  // Per-dim strides of every operand over the full rank, then keep the batch part.
  int64_t sa[2 * kMaxBatchDims + 2], sb[2 * kMaxBatchDims + 2], sbias[2 * kMaxBatchDims + 2],
      sres[2 * kMaxBatchDims + 2];
  const size_t nb = r - 2;
  if (nb > 2 * kMaxBatchDims)
    return ArgError(op, "a", "at most " + std::to_string(2 * kMaxBatchDims) + " batch dims",
                        "shape " + ShapeString(ad));
  BroadcastStrides(ad, sa);
  BroadcastStrides(bd, sb);
  for (size_t i = 0; i < r; ++i) sbias[i] = sres[i] = 0;
  if (has_bias) BroadcastStrides(bias->dimensions(), sbias);
  if (has_res) {
    auto rd = residual->dimensions();
    BroadcastStrides(rd, sres);
    p.res_row_stride = rd[r - 2] == 1 ? 0 : rd[r - 1];
    p.res_col_stride = rd[r - 1] == 1 ? 0 : 1;
  }
  // Coalesce: drop size-1 output dims, merge a dim into its outer neighbour when every operand's
  // strides make the pair one dim.
  int rank = 0;
  for (size_t i = 0; i < nb; ++i) {
    if (od[i] == 1) continue;
    if (rank > 0) {
      const int j = rank - 1;
      auto merges = [&](const int64_t* s, const int64_t* kept) { return kept[j] == s[i] * od[i]; };
      if (merges(sa, p.a_stride) && merges(sb, p.b_stride) && merges(sbias, p.bias_stride) &&
          merges(sres, p.res_stride)) {
        p.batch_dims[j] *= od[i];
        p.a_stride[j] = sa[i];
        p.b_stride[j] = sb[i];
        p.bias_stride[j] = sbias[i];
        p.res_stride[j] = sres[i];
        continue;
      }
    }
    if (rank == kMaxBatchDims)
      return ArgError(op, "a", "batch dims that coalesce into at most 8 broadcast groups",
                          "shapes " + ShapeString(ad) + " and " + ShapeString(bd));
    p.batch_dims[rank] = od[i];
    p.a_stride[rank] = sa[i];
    p.b_stride[rank] = sb[i];
    p.bias_stride[rank] = sbias[i];
    p.res_stride[rank] = sres[i];
    ++rank;
  }
  // Fold innermost batch dims over which b and bias are shared into M: one taller GEMM fills the GPU
  // where many short ones would not (vmap of x @ w over x lands here).
  while (rank > 0) {
    const int j = rank - 1;
    const bool res_full = !has_res || (p.res_stride[j] == p.m * p.n && p.res_row_stride == p.n &&
                                       p.res_col_stride == 1);
    if (p.b_stride[j] != 0 || p.bias_stride[j] != 0 || p.a_stride[j] != p.m * p.k || !res_full) break;
    p.m *= p.batch_dims[j];
    --rank;
  }
  p.batch_rank = rank;
  p.batch_count = 1;
  for (int i = 0; i < rank; ++i) p.batch_count *= p.batch_dims[i];
  p.a = a.untyped_data();
  p.b = b.untyped_data();
  p.bias = has_bias ? bias->untyped_data() : nullptr;
  p.residual = has_res ? residual->untyped_data() : nullptr;
  p.out = out.untyped_data();
  return ffi::Error::Success();
}

ffi::Error MatmulCpu(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::Result<ffi::AnyBuffer> out, int64_t precision) {
  MatmulProblem p;
  JK_RETURN_IF_ERROR(BuildProblem(kMatmul, a, b, nullptr, nullptr, *out, precision, 0, p));
  if (out->element_count() == 0) return ffi::Error::Success();
  cpu::Matmul(p);
  return ffi::Error::Success();
}

ffi::Error LinearCpu(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::AnyBuffer bias, ffi::AnyBuffer residual,
                     ffi::Result<ffi::AnyBuffer> out, int64_t precision, int64_t activation) {
  MatmulProblem p;
  JK_RETURN_IF_ERROR(BuildProblem(kLinear, a, b, &bias, &residual, *out, precision, activation, p));
  if (out->element_count() == 0) return ffi::Error::Success();
  cpu::Matmul(p);
  return ffi::Error::Success();
}

#ifdef JK_WITH_CUDA
// The CUDA lowering's optional second result: float32 scratch for the split-K decode tier (SplitPipe), which runs
// only where it holds that tier's partial sums (jax_kernels/matmul.py sizes it; the launcher checks the size).
ffi::Error TakeMatmulWorkspace(std::string_view op, const ffi::RemainingRets& extra, MatmulProblem& p) {
  auto ws = TakeWorkspace(op, extra, 1);
  if (ws.has_error()) return ws.error();
  p.workspace = ws->data;
  p.workspace_bytes = ws->bytes;
  return ffi::Error::Success();
}

ffi::Error MatmulCuda(cudaStream_t stream, ffi::AnyBuffer a, ffi::AnyBuffer b,
                      ffi::Result<ffi::AnyBuffer> out, ffi::RemainingRets extra, int64_t precision) {
  MatmulProblem p;
  JK_RETURN_IF_ERROR(BuildProblem(kMatmul, a, b, nullptr, nullptr, *out, precision, 0, p));
  JK_RETURN_IF_ERROR(TakeMatmulWorkspace(kMatmul, extra, p));
  if (out->element_count() == 0) return ffi::Error::Success();  // a 0-block grid is a launch error
  return CudaStatus(stream, LaunchMatmul(stream, p), kMatmul);
}

ffi::Error LinearCuda(cudaStream_t stream, ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::AnyBuffer bias,
                      ffi::AnyBuffer residual, ffi::Result<ffi::AnyBuffer> out, ffi::RemainingRets extra,
                      int64_t precision, int64_t activation) {
  MatmulProblem p;
  JK_RETURN_IF_ERROR(BuildProblem(kLinear, a, b, &bias, &residual, *out, precision, activation, p));
  JK_RETURN_IF_ERROR(TakeMatmulWorkspace(kLinear, extra, p));
  if (out->element_count() == 0) return ffi::Error::Success();
  return CudaStatus(stream, LaunchMatmul(stream, p), kLinear);
}
#endif

}  // namespace

XLA_FFI_DEFINE_HANDLER(kMatmulCpu, MatmulCpu, ffi::Ffi::Bind()
                           .Arg<ffi::AnyBuffer>()  // a
                           .Arg<ffi::AnyBuffer>()  // b
                           .Ret<ffi::AnyBuffer>()  // out
                           .Attr<int64_t>("precision"));
XLA_FFI_DEFINE_HANDLER(kLinearCpu, LinearCpu, ffi::Ffi::Bind()
                           .Arg<ffi::AnyBuffer>()  // a (x)
                           .Arg<ffi::AnyBuffer>()  // b (w)
                           .Arg<ffi::AnyBuffer>()  // bias or the absent marker
                           .Arg<ffi::AnyBuffer>()  // residual or the absent marker
                           .Ret<ffi::AnyBuffer>()  // out
                           .Attr<int64_t>("precision")
                           .Attr<int64_t>("activation"));
#ifdef JK_WITH_CUDA
// Graph-safe: no allocation (the workspace is an XLA-allocated result), no synchronisation, the same launches for the
// same shapes and buffers (the shared-memory opt-in is a host-side function attribute).
XLA_FFI_DEFINE_HANDLER(kMatmulCuda, MatmulCuda, ffi::Ffi::Bind()
                           .Ctx<ffi::PlatformStream<cudaStream_t>>()
                           .Arg<ffi::AnyBuffer>()
                           .Arg<ffi::AnyBuffer>()
                           .Ret<ffi::AnyBuffer>()
                           .RemainingRets()  // the optional workspace
                           .Attr<int64_t>("precision"),
                       {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER(kLinearCuda, LinearCuda, ffi::Ffi::Bind()
                           .Ctx<ffi::PlatformStream<cudaStream_t>>()
                           .Arg<ffi::AnyBuffer>()
                           .Arg<ffi::AnyBuffer>()
                           .Arg<ffi::AnyBuffer>()
                           .Arg<ffi::AnyBuffer>()
                           .Ret<ffi::AnyBuffer>()
                           .RemainingRets()  // the optional workspace
                           .Attr<int64_t>("precision")
                           .Attr<int64_t>("activation"),
                       {ffi::Traits::kCmdBufferCompatible});
#endif

void AddMatmulTargets(TargetList& t) {
  t.push_back({"jk_matmul", kMatmulCpu, JK_CUDA_HANDLER(kMatmulCuda)});
  t.push_back({"jk_linear", kLinearCpu, JK_CUDA_HANDLER(kLinearCuda)});
}

}  // namespace jk
