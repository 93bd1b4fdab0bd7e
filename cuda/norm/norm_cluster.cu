// The norms' cluster tier: shape rule and launch (kernel in norm_cluster.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "common/launch.h"
#include "norm/norm_cluster.cuh"
#include "norm/norm_cluster.h"

namespace jk::norm {

namespace {
constexpr int kThreads = 512;
constexpr int kMaxCluster = 8;  // the portable cluster size limit
constexpr int kClusterPacks = 8;  // ClusterRowsNorm's 16-byte packs per thread

// The kernels' kLean forms (norm_cluster.cuh): the default for 16-bit rows and on the hybrid kernel (RMSNorm float32).
// H200, one process, CUPTI against the plain forms (bench/lab/s31_lean_lab_h200.txt, % of the copy ceiling):
//   LayerNorm 16-bit 24576 x 65536   80.4-81.1% -> 83.5-84.0%     RMSNorm 16-bit 65536   88.1-88.5% -> 88.4-88.6%
//   RMSNorm float32 49152 x 32768    84.7% -> 86.3% (6 + 10 packs: 89.2%)
//   RMSNorm float32 24576 x 65536    84.4% -> 85.3% (6 + 10 packs: 88.4%)
// Float32 LayerNorm lost with it (16384 / 32768 / 65536: 97.3 / 88.9 / 86.6% -> 95.1 / 88.0 / 85.6%; its form with
// the scale in shared memory spills 16 bytes) and keeps the plain one. Lab knob JK_NORM_LEAN=0|1 (re-read at every
// launch) forces either.
bool LeanOn(bool by_default) { return KnobOr("JK_NORM_LEAN", by_default); }

// Elements per thread: 32 float32 (8 packs as floats) or 64 16-bit (8 packs as raw words); both keep a
// CTA of 512 threads under 64 registers, two per SM. This rule takes LayerNorm rows of float32 n >= 16384
// and of 16-bit n > 32768 (past the packed block tier), RMSNorm's 16-bit rows n > 32768; clusters of up to 8
// on an occupancy-sized persistent grid, and at float32 16384 (one CTA, no cluster) a CTA per row. Since session 32
// the row-pairs form (norm_cluster_pairs.cu) comes first: by default this kernel keeps float32 LayerNorm at 16384
// columns, 16-bit LayerNorm rows that leave the last CTA partly empty, and rows with grouped parameters. The CTAs'
// states travel by ClusterExchange (common/cluster_exchange.cuh), not a cluster barrier per row. H200
// (bench/lab/s8_h200.md, s10_h200.md), against the tiers before (two reads), then with the exchange:
//   float32 16384  85% -> 97% of the copy ceiling     float32 32768  67% -> 75% -> 85%
//   float32 65536  58% -> 71% -> 79-80%               16-bit 65536   64% -> 72% -> 74%
//   RMSNorm 16-bit 65536: 68-69% (two reads) -> 75-76%
// RMSNorm's float32 rows lost on it (32768: 82% -> 65-69%, 65536: 69% -> 60%; its float32 instantiation
// spills 72-88 bytes, not resolved) and keep the two-read tiers. CTAs of 256 threads (clusters twice as wide)
// tied or lost (s10_h200.md, call 3).
// Lab knob JK_NORM_CLUSTER = "F R [T]": rows longer than F columns (F = 0: the default's; RMSNorm float32
// included), R resident clusters (-1: as many as the occupancy calculator says fit, 0: one cluster per row,
// R > 0: R CTAs per SM), T threads per CTA (default 512); "off": none. JK_CLUSTER_EXCHANGE=0: the barrier.
struct Shape {
  int ctas = 0, resident = -1;  // ctas == 0: not this tier
  int threads = 0;              // per CTA: the row's packs over the cluster, in whole warps (RowSpanFor)
};
template <typename T, Kind K>
Shape Choose(int64_t n) {
  constexpr int64_t kElems = kClusterPacks * (16 / sizeof(T));
  int64_t from = sizeof(T) == 4 ? 16383 : 32768;  // rows longer than this
  int resident = -2;                              // -2: the default's grid (see above)
  int t = kThreads;
  if (const char* env = std::getenv("JK_NORM_CLUSTER")) {
    int f = 0, r = -1;
    const int got = std::sscanf(env, "%d %d %d", &f, &r, &t);
    if (got < 2 || t < 32 || t > kThreads || t % 32 != 0) return {};
    if (f > 0) from = f;
    resident = r;
  } else if (K == Kind::kRmsNorm && sizeof(T) == 4) {
    return {};
  }
  if (n <= from) return {};
  const RowSpan span = RowSpanFor(n, kElems, t, kMaxCluster);
  if (span.ctas == 0) return {};
  if (resident == -2) resident = span.ctas == 1 ? 0 : -1;
  return {span.ctas, resident, span.threads};
}

// Rows held partly in registers, partly in shared memory (ClusterRowsNormHybrid): float32 rows past 16384 (one CTA up
// to 512 threads x the packs, then clusters of 2-8). The rule for RMSNorm's float32 rows of 28672 columns and more
// (HybridRowsChoice; since session 32 the row-pairs form takes them first up to 131072 columns, and rows with grouped
// scales), at 7 + 9 packs per thread (registers + staged), lean. Measured on an H200 (% of the copy
// ceiling; the tiers before: two reads):
//   RMSNorm float32 49152 x 32768   81% -> 85% (4 + 12, 1.26x jnp; bench/lab/s12_h200.md call 2) -> 89.2% (6 + 10,
//                                   lean; 4 + 12 lean: 86.3%; bench/lab/s31_lean_lab_h200.txt) -> 90.0% (7 + 9
//                                   lean, against 89.8% for 6 + 10 in the same process; s31_full_h3_lab_h200.txt)
//   RMSNorm float32 24576 x 65536   69% -> 84% (4 + 12, 1.01x -> 1.25x) -> 88.4% (6 + 10 lean; 4 + 12 lean: 85.3%)
//                                   -> 89.3% (7 + 9 lean, 6 + 10: 89.1%)
// The plain 6 + 10 form had lost (63-71%; it spilled 32 bytes, its lean form none; 7 + 9: 40 bytes, lean none; 8 + 8
// lean spills 24). LayerNorm lost at either shape
// (66-77% against the cluster tier's 80-83%, s12 calls 2-3; lean 79-83% against 87-89%, session 31), and so did every
// 16-bit form (4 + 12, 2 + 14 packs: 31-40%; they spilled 8-160 bytes; not built since). Lab knob JK_NORM_HYBRID
// (re-read per launch, float32 only): 0 = off, 1 = 6 + 10 packs, 2 = 4 + 12, 3 = 7 + 9; unset: the default (set
// JK_NORM_CLUSTER alone: off).
// The cluster-size limit keeps n <= 8 x 512 x 64 here, as the kernel's 32-bit column math wants.
// The span: the fewest CTAs of up to 512 threads, unless CTAs of up to 256 threads (twice as many) keep more threads
// resident on an SM. That happens where the wider CTA has 384 threads (two per SM by registers: 768 threads; RMSNorm
// float32 49152 columns ran 0.91x jnp on 2 x 384, bench/lab/s19_h200.md); at 512, 448 or 320 the two tie and the
// wider span stays.
template <typename T, Kind K, int kPacks, int kStaged>
cudaError_t LaunchHybridRowsImpl(const Params<T>& p, cudaStream_t stream) {
  constexpr int kP = 16 / sizeof(T);
  auto kernel = LeanOn(true) ? ClusterRowsNormHybrid<T, K, kPacks, kStaged, true>
                             : ClusterRowsNormHybrid<T, K, kPacks, kStaged, false>;
  const int64_t packs = CeilDiv(p.n, kP);
  RowSpan span = RowSpanFor(packs, kPacks + kStaged, kThreads, kMaxCluster);
  if (span.ctas == 0) return cudaErrorNotSupported;
  auto resident_threads = [&](const RowSpan& s) {
    int blocks = 0;
    const size_t smem = size_t(kStaged) * s.threads * 16;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, s.threads, smem) != cudaSuccess) {
      (void)cudaGetLastError();  // no figure: keep the wider span
      return 0;
    }
    return blocks * s.threads;
  };
  const RowSpan narrow = RowSpanFor(packs, kPacks + kStaged, kThreads / 2, kMaxCluster);
  if (narrow.ctas != 0 && narrow.ctas > span.ctas && resident_threads(narrow) > resident_threads(span)) span = narrow;
  const size_t smem = size_t(kStaged) * span.threads * 16;
  return LaunchClusterGrid(kernel, span.ctas, span.threads, smem, p.outer, -1, stream, p);
}
// The cluster kernel's scale in shared memory (kSmemScale in norm_cluster.cuh): float32 LayerNorm. Measured on an
// H200 (bench/lab/s14_h200.md call 6, % of the copy ceiling, scale from L2 -> from shared memory):
//   LayerNorm float32 49152 x 32768   84% -> 88%      24576 x 65536   80% -> 86%
//   LayerNorm 16-bit  24576 x 65536   80% -> 77-80%   RMSNorm 16-bit  24576 x 65536   88% -> 71%
// (the 16-bit forms spill 16-40 bytes with the slots' addressing). The lean 16-bit RMSNorm forms spill none with it
// (session 31, bench/lab/s31_ss_lab_h200.txt, lean, scale from L2 -> from shared memory):
//   RMSNorm 16-bit 24576 x 65536     88.5-88.7% -> 92.1-92.3%     LayerNorm 16-bit 65536   83.7-84.1% -> 80.0-80.4%
// so it is on for float32 LayerNorm and for lean 16-bit RMSNorm. Lab knob JK_NORM_SMEM_SCALE=1|0 (re-read at every
// launch) forces it on or off for every dtype.
template <typename T, Kind K>
bool SmemScaleOn(bool lean) {
  return KnobOr("JK_NORM_SMEM_SCALE", sizeof(T) == 4 ? K == Kind::kLayerNorm : K == Kind::kRmsNorm && lean);
}
// RMSNorm float32 rows of 16385-28671 columns keep the two-read tier: there the hybrid ran a CTA of up to 448 threads
// and lost at 20480 and 24576 columns (H200, session 19, bench/lab/s19_h200.md, CUPTI against jnp in processes of
// their own: hybrid 1.27x / 0.97x (84% / 65% of copy), two reads 1.33x / 1.35x (88% / 90%); 28672 a tie, 1.25x /
// 1.24x; measured at 4 + 12 packs, the same span as 7 + 9).
constexpr int64_t kHybridRmsMinColumns = 28672;
template <Kind K>
int HybridRowsChoice(int64_t n) {
  if (const char* e = std::getenv("JK_NORM_HYBRID")) return std::atoi(e);
  if (std::getenv("JK_NORM_CLUSTER") != nullptr) return 0;  // the cluster tier's knob forces that tier
  return K == Kind::kRmsNorm && n >= kHybridRmsMinColumns ? 3 : 0;
}
template <typename T, Kind K>
cudaError_t LaunchHybridRows(const Params<T>& p, cudaStream_t stream, int choice) {
  static_assert(sizeof(T) == 4, "float32 only: the 16-bit forms lost (above)");
  if (choice == 1) return LaunchHybridRowsImpl<T, K, 6, 10>(p, stream);
  if (choice == 2) return LaunchHybridRowsImpl<T, K, 4, 12>(p, stream);
  if (choice == 3) return LaunchHybridRowsImpl<T, K, 7, 9>(p, stream);
  return cudaErrorNotSupported;
}
}  // namespace

template <typename T, Kind K>
cudaError_t LaunchClusterRows(const Params<T>& p, cudaStream_t stream) {
  if (p.inner != 1 || !RunsSm90Code()) return cudaErrorNotSupported;
  // The row-pairs form (norm_cluster_pairs.cu) first, where its rule takes the row; then the kernels below.
  if (const cudaError_t e = LaunchClusterRowPairs<T, K>(p, stream); e != cudaErrorNotSupported) return e;
  if constexpr (sizeof(T) == 4) {
    if (p.n > 16384) {
      const cudaError_t e = LaunchHybridRows<T, K>(p, stream, HybridRowsChoice<K>(p.n));
      if (e != cudaErrorNotSupported) return e;
    }
  }
  const Shape shape = Choose<T, K>(p.n);
  if (shape.ctas == 0) return cudaErrorNotSupported;
  // The exchange only matters between CTAs (a cluster of one keeps the plain kernel).
  const bool exchange = shape.ctas > 1 && ClusterExchangeOn();
  // The scale in shared memory (kSmemScale): one scale row, on a persistent grid (a CTA per row would copy it
  // for every row).
  const bool lean = LeanOn(sizeof(T) == 2);
  const bool smem_scale =
      SmemScaleOn<T, K>(lean) && p.scale != nullptr && p.scale_rows_per_group >= p.outer && shape.resident != 0;
  // Lean 16-bit LayerNorm rows that fill every rank's packs exactly (65536: 2 x 8 x 512 x 8; by default the row-pairs
  // form takes those since session 32, unless their parameters are grouped) take the kFull form, without per-pack
  // column checks. H200, one process (bench/lab/s31_full_h3_lab_h200.txt): 24576 x 65536 bf16 / f16 84.0% / 83.7% ->
  // 89.3% / 89.1% of copy. RMSNorm's kFull forms spill 16 bytes where its others spill none: not used. Lab knob
  // JK_NORM_FULL=0 (re-read at every launch) keeps the checked form.
  const bool full = lean && K == Kind::kLayerNorm && sizeof(T) == 2 && KnobOr("JK_NORM_FULL", true) &&
                    p.n == int64_t{shape.ctas} * kClusterPacks * shape.threads * (16 / int64_t{sizeof(T)});
  auto pick = [&](auto lean_tag, auto full_tag) {
    constexpr bool kLean = decltype(lean_tag)::value, kFull = decltype(full_tag)::value;
    if (smem_scale) {
      return exchange ? ClusterRowsNorm<T, K, kClusterPacks, true, true, kLean, kFull>
                      : ClusterRowsNorm<T, K, kClusterPacks, false, true, kLean, kFull>;
    }
    return exchange ? ClusterRowsNorm<T, K, kClusterPacks, true, false, kLean, kFull>
                    : ClusterRowsNorm<T, K, kClusterPacks, false, false, kLean, kFull>;
  };
  auto kernel = lean ? pick(std::true_type{}, std::false_type{}) : pick(std::false_type{}, std::false_type{});
  if constexpr (sizeof(T) == 2 && K == Kind::kLayerNorm) {  // the only kFull forms built
    if (full) kernel = pick(std::true_type{}, std::true_type{});
  }
  const size_t smem = smem_scale ? size_t(kClusterPacks) * shape.threads * 16 : 0;
  // Ranks own contiguous slices of kClusterPacks x shape.threads packs; the last rank's may be partly padding.
  return LaunchClusterGrid(kernel, shape.ctas, shape.threads, smem, p.outer, shape.resident, stream, p);
}

template cudaError_t LaunchClusterRows<float, Kind::kLayerNorm>(const Params<float>&, cudaStream_t);
template cudaError_t LaunchClusterRows<float, Kind::kRmsNorm>(const Params<float>&, cudaStream_t);
template cudaError_t LaunchClusterRows<__nv_bfloat16, Kind::kLayerNorm>(const Params<__nv_bfloat16>&, cudaStream_t);
template cudaError_t LaunchClusterRows<__nv_bfloat16, Kind::kRmsNorm>(const Params<__nv_bfloat16>&, cudaStream_t);
template cudaError_t LaunchClusterRows<__half, Kind::kLayerNorm>(const Params<__half>&, cudaStream_t);
template cudaError_t LaunchClusterRows<__half, Kind::kRmsNorm>(const Params<__half>&, cudaStream_t);

}  // namespace jk::norm
