// Runs the strided norm tier (cuda/norm/norm_strided.cuh: the column tile held in registers), the scalar
// two-read kernel and the softmax column tile (cuda/softmax/softmax_columns.cuh) on the CPU through
// bench/lab/norm_emulator.cc's machinery (one host thread per CUDA thread) and compares every element (and
// the returned LayerNorm statistics) with the CPU implementation (norms) or float64 (softmax), for x viewed
// as (outer, n, inner) with inner > 1. Build and run with `bash bench/lab/strided_emulate.sh` (no GPU). What
// it cannot check: clusters (distributed shared memory; the emulator aborts on a cluster launch), the
// approximate MUFU exp2/log2 (host exp2f/log2f stand in), timing.
#include <array>

#define main norm_emulator_main
#include "norm_emulator.cc"
#undef main

// Host stand-ins for the device intrinsics the softmax kernels' header uses outside templates.
inline float __uint_as_float(unsigned u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline float __shfl_xor_sync(unsigned mask, float v, int lane_mask) { return __shfl_xor_sync(mask, v, lane_mask, 32); }
namespace cooperative_groups {}  // the header declares nothing for a host compiler
using std::isfinite;
using std::isnan;
inline float __int_as_float(int u) { return __uint_as_float(static_cast<unsigned>(u)); }
inline uint4 __ldcs(const uint4* p) { return *p; }
#include "softmax/softmax_columns.cuh"  // rewritten by strided_emulate.sh (launch, PTX asm)

namespace {

int softmax_cases = 0;

template <typename T>
void CheckSoftmax(jk::DType, bool log, int64_t outer, int64_t n, int64_t inner) {
  const int64_t total = outer * n * inner;
  auto alloc = [](int64_t count) { return std::vector<T>(count + 64); };
  auto aligned = [](std::vector<T>& v) {
    return reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(v.data()) + 15) & ~uintptr_t(15));
  };
  auto xs = alloc(total), ys = alloc(total);
  T *x = aligned(xs), *y = aligned(ys);
  std::mt19937 g(cases * 7919 + 5);
  Fill<T>(x, total, g, 0.f, 3.f);
  ++cases;
  const cudaError_t e = jk::softmax::LaunchColumnsTile<T>(nullptr, x, y, outer, n, inner, log, false);
  if (e == cudaErrorNotSupported) return;  // the configuration does not hold this column: ColumnsKernel
  ++softmax_cases;
  const double tol = std::is_same_v<T, float> ? 1e-5 : std::is_same_v<T, __half> ? 4e-3 : 2e-2;
  int64_t bad = 0, first = -1;
  double want_first = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double m = -INFINITY, s = 0;
      for (int64_t j = 0; j < n; ++j) m = std::max(m, double(Get<T>(x, (o * n + j) * inner + i)));
      for (int64_t j = 0; j < n; ++j) s += std::exp(double(Get<T>(x, (o * n + j) * inner + i)) - m);
      for (int64_t j = 0; j < n; ++j) {
        const int64_t k = (o * n + j) * inner + i;
        const double t = double(Get<T>(x, k)) - m;
        const double want = log ? t - std::log(s) : std::exp(t) / s;
        if (!(std::fabs(Get<T>(y, k) - want) <= tol * (1.0 + std::fabs(want)))) {
          if (first < 0) first = k, want_first = want;
          ++bad;
        }
      }
    }
  }
  if (e != cudaSuccess || bad) {
    ++failures;
    std::printf("MISMATCH %s outer=%ld n=%ld inner=%ld: err=%d, %ld bad (first %ld: %g vs %g)\n",
                log ? "log_softmax" : "softmax", long(outer), long(n), long(inner), int(e), long(bad), long(first),
                first >= 0 ? Get<T>(y, first) : 0.f, want_first);
    std::fflush(stdout);
  }
}

template <typename T>
void CheckStrided(jk::DType dt, bool layer, int64_t outer, int64_t n, int64_t inner, int64_t groups, int offset) {
  jk::NormShape s;
  s.outer = outer;
  s.n = n;
  s.inner = inner;
  s.scale_groups = s.bias_groups = groups;
  const int64_t total = outer * n * inner, stats = outer * inner;
  auto alloc = [](int64_t count) { return std::vector<T>(count + 64); };
  auto aligned = [](std::vector<T>& v, int off) {
    return reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(v.data()) + 15) & ~uintptr_t(15)) + off;
  };
  auto xs = alloc(total), ys = alloc(total), rs = alloc(total), ss = alloc(groups * n), bs = alloc(groups * n);
  T *x = aligned(xs, offset), *y = aligned(ys, offset), *r = aligned(rs, offset), *sc = aligned(ss, 1),
    *bi = aligned(bs, 0);  // scale misaligned on purpose: the tier loads it one element at a time
  std::mt19937 g(cases * 7919 + 3);
  Fill<T>(x, total, g, layer ? 30.f : 0.5f, 2.f);  // LayerNorm: a mean far from 0 (the shift matters)
  Fill<T>(sc, groups * n, g, 1.f, 0.5f);
  Fill<T>(bi, groups * n, g, 0.f, 0.5f);
  std::vector<float> mean(stats), rstd(stats), cmean(stats), crstd(stats);
  cudaError_t e;
  if (layer) {
    e = jk::LaunchLayerNorm(nullptr, dt, x, sc, bi, y, mean.data(), rstd.data(), s, 1e-5f);
    jk::cpu::LayerNorm(dt, x, sc, bi, r, cmean.data(), crstd.data(), s, 1e-5f);
  } else {
    e = jk::LaunchRmsNorm(nullptr, dt, x, sc, y, s, 1e-6f);
    jk::cpu::RmsNorm(dt, x, sc, r, s, 1e-6f);
  }
  ++cases;
  const float tol = std::is_same_v<T, float> ? 2e-5f : std::is_same_v<T, __half> ? 4e-3f : 2e-2f;
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < total; ++i) {
    const float a = Get<T>(y, i), b = Get<T>(r, i);
    if (!(std::fabs(a - b) <= tol * (1.f + std::fabs(b)))) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  int64_t bad_stats = 0;
  if (layer) {
    for (int64_t i = 0; i < stats; ++i) {
      if (!(std::fabs(mean[i] - cmean[i]) <= 1e-4f * (1.f + std::fabs(cmean[i]))) ||
          !(std::fabs(rstd[i] - crstd[i]) <= 1e-3f * crstd[i]))
        ++bad_stats;
    }
  }
  if (e != cudaSuccess || bad || bad_stats) {
    ++failures;
    std::printf("MISMATCH %s dtype=%d outer=%ld n=%ld inner=%ld groups=%ld offset=%d: err=%d, %ld bad y (first %ld: "
                "%g vs %g), %ld bad stats\n",
                layer ? "layer_norm" : "rms_norm", int(dt), long(outer), long(n), long(inner), long(groups), offset,
                int(e), long(bad), long(first), first >= 0 ? Get<T>(y, first) : 0.f,
                first >= 0 ? Get<T>(r, first) : 0.f, long(bad_stats));
    std::fflush(stdout);
  }
}

}  // namespace

int main() {
  const char* tile = std::getenv("JK_STRIDED_TILE");
  // (outer, n, inner): size-1 dims, partial tiles (column packs not a multiple of TX), tiles that cross an
  // outer index, n at and past the rows one CTA holds (1024 for "4 8 512", 2048 for "2 4 1024" / "4 16 512",
  // 4096 for "2 8 1024" / "2 16 512"), inner not a multiple of the pack (the scalar kernel).
  const std::vector<std::array<int64_t, 3>> shapes = {
      {3, 1, 16}, {1, 7, 8}, {2, 33, 24}, {3, 100, 40}, {2, 513, 16}, {1, 1024, 8}, {1, 1025, 8}, {1, 2048, 16},
      {1, 2049, 8},
      {1, 4096, 8}, {1, 4100, 8}, {2, 64, 12}, {2, 50, 3}};
  for (auto [outer, n, inner] : shapes) {
    for (int layer = 0; layer < 2; ++layer) {
      const int64_t groups = outer % 2 ? 1 : 2;
      CheckStrided<float>(jk::DType::kF32, layer, outer, n, inner, groups, 0);
      CheckStrided<__nv_bfloat16>(jk::DType::kBF16, layer, outer, n, inner, groups, 0);
      CheckStrided<__half>(jk::DType::kF16, layer, outer, n, inner, 1, 0);
      if (inner % 8 == 0) CheckStrided<__nv_bfloat16>(jk::DType::kBF16, layer, outer, n, inner, 1, 1);  // misaligned
      CheckSoftmax<float>(jk::DType::kF32, layer, outer, n, inner);
      CheckSoftmax<__nv_bfloat16>(jk::DType::kBF16, layer, outer, n, inner);
      CheckSoftmax<__half>(jk::DType::kF16, layer, outer, n, inner);
    }
  }
  std::printf("emulated %d strided cases (%d of them softmax column tiles; %ld launches, JK_STRIDED_TILE=%s): "
              "%d mismatches\n", cases, softmax_cases, jk_emu::launches, tile ? tile : "(unset)", failures);
  return failures != 0;
}
