// Tier selection and launches for jk_matmul / jk_linear.
//
// Tiers (first match wins):
//   K == 0                                      SimtTiled (writes the epilogue of a zero accumulator)
//   bf16/f16 2 <= M <= 16, K % 8, N % 8,        SplitPipe where K splits into >= 2 ranks and the caller's
//     a, b 16-byte aligned, sm_90                 workspace holds their partials (SkinnyPipe's stream in
//                                                 small CTAs, no cluster, a sum + epilogue kernel;
//                                                 JK_MATMUL_DECODE=split|cluster, JK_MATMUL_SPLIT_RANKS),
//                                                 else SkinnyPipe (decode as a stream: b in row segments
//                                                 through a cp.async ring, mma.sync, split-K over a cluster;
//                                                 JK_MATMUL_PIPE=0|1, _CW, _CTAS_PER_SM, _CLUSTER, _STAGES)
//   bf16 4 <= M <= 8 / f16 5 <= M <= 8,         SkinnyMma (decode shapes on tensor cores, split-K over a
//     N % 8 == 0, b 16-byte aligned, sm_90        cluster; JK_MATMUL_SKINNY=simt|mma|stream, where stream
//                                                 is SkinnyStream, its cp.async-ring twin, off by default)
//   M <= 8, N % 8 == 0, b 16-byte aligned       SkinnyM (float32 decode shapes)
//   bf16/f16 on sm_90, K % 8, N % 8, aligned,   WgmmaTma (TMA + wgmma; JK_MATMUL_WGMMA=0 opts out,
//     batch strides of whole matrices,            =1 forces it for any size; 128x256, 128x128 or 128x64
//     K >= 64 and >= 16 tiles of 128x128,         tiles, matmul_wgmma_launch.cu; split-K over a cluster
//     or K >= 768 and 32-63 tiles                 of 2 where 128x64 tiles do not apply: on 132 SMs, never;
//                                                 plain matmuls of one wave of clusters, K >= 512, rows
//                                                 mid-sector: WgmmaSwap, C^T = b^T a^T on 144x64 tiles in
//                                                 clusters of 4, matmul_wgmma_swap.cuh; JK_MATMUL_WGMMA_SWAP)
//   bf16/f16, K % 8 == 0, N % 8 == 0, aligned   MmaTensorCore (16-byte cp.async rows)
//   bf16/f16, M > 8, rows not 16-byte aligned    MmaStaged (MmaTensorCore reading the misaligned operand
//     (odd N, K % 8 != 0, sliced base)             through registers; JK_MATMUL_UNALIGNED=simt opts out,
//                                                 =mma forces it for M <= 8 too). On CUDA the JAX lowering
//                                                 pads odd K/N rows first (jax_kernels/matmul.py), so
//                                                 this runs with JK_MATMUL_PAD=0 or for sliced bases
//   f32 DEFAULT/HIGH on sm_90, K % 4, N % 4,     WgmmaTf32 (C^T = b^T a^T on TF32 wgmma: a's tile the
//     aligned, batch strides of whole matrices,    K-major smem operand, b's from registers; TMA in and
//     shapes where it was measured faster          out; JK_MATMUL_TF32=mma|wgmma, matmul_wgmma_tf32.cu)
//   f32 DEFAULT/HIGH, K % 4, N % 4, aligned     MmaTensorCore with TF32 inputs (as XLA does)
//   f32, K % 4 == 0, N % 4 == 0, aligned        SimtRing where 64x64 tiles fill at most a quarter of the SMs
//                                               and K <= 2048 (16x32 tiles of 64 threads, a cp.async ring;
//                                               matmul_simt_ring.cuh; JK_MATMUL_SIMT=ring16|ring32|noring),
//                                               else SimtRegisterBlocked 128x128 (64x64 when 128-tiles
//                                               would leave most SMs idle; below one wave of 64x64 tiles,
//                                               64x64 with K split over a cluster, else 32x64)
//   anything else (odd strides, misaligned)     SimtTiled
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/launch.h"
#include "matmul/matmul_decode.cuh"
#include "matmul/matmul_decode_split.cuh"
#include "matmul/matmul_launch.h"
#include "matmul/matmul_mma_launch.cuh"
#include "matmul/matmul_simt.cuh"
#include "matmul/matmul_simt_ring.cuh"
#include "matmul/matmul_tma_host.h"
#include "matmul/matmul_skinny_mma.cuh"
#include "matmul/matmul_skinny_stream.cuh"
#include "matmul/matmul_wgmma_launch.h"
#include "matmul/matmul_wgmma_tf32.h"

namespace jk {
namespace {

constexpr int64_t kMaxGridYZ = 65535;

bool Aligned16(const void* ptr) { return ptr == nullptr || reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

// Both operands can be read in 16-byte rows: `elems` elements per 16 bytes.
bool VectorRows(const MatmulProblem& p, int64_t elems) {
  return p.k % elems == 0 && p.n % elems == 0 && Aligned16(p.a) && Aligned16(p.b);
}

int64_t ElementBytes(DType t) { return t == DType::kF32 ? 4 : 2; }

dim3 Grid(const MatmulProblem& p, int64_t bm, int64_t bn) {
  return dim3(static_cast<unsigned>(CeilDiv(p.n, bn)),
              static_cast<unsigned>(std::min(CeilDiv(p.m, bm), kMaxGridYZ)),
              static_cast<unsigned>(std::min(p.batch_count, kMaxGridYZ)));
}

template <typename F32, typename BF16, typename F16, typename Fn>
cudaError_t Dispatch(DType t, Fn&& fn) {
  return DispatchFloat<F32, BF16, F16>(t, cudaErrorInvalidValue, fn);
}

// The 16-bit tiers' dispatch: fn(TypeTag<__nv_bfloat16 or __half>{}); float32, never chosen for them, is an error.
template <typename Fn>
cudaError_t DispatchHalf(DType t, Fn&& fn) {
  return t == DType::kF32 ? cudaErrorInvalidValue : Dispatch<__nv_bfloat16, __nv_bfloat16, __half>(t, fn);
}

// Whether the current device runs the tensor-core decode kernels (sm_80+) and their cluster reductions
// (this build's sm_90 code, RunsSm90Code: in older PTX the reduction compiles to nothing).
struct SkinnyMmaDevice {
  bool runs = false, clusters = false;
};
SkinnyMmaDevice SkinnyMmaSupport() { return {ComputeMajor() >= 8, RunsSm90Code()}; }

// Which decode tier takes 16-bit M <= 8 problems. By default SkinnyMma from M = 4 (bf16) or 5 (f16) (H200,
// bench/lab/matmul_small_h200.md and matmul_s3_h200.md: the tensor-core tier costs the same at any M <= 8,
// ~17-20 us at K = N = 4096; the SIMT tier grows with M: 10.8 us at M = 1, bf16 20.9 / f16 17.1 at M = 4,
// 33 at M = 8). SkinnyStream is off by default (kSkinnyStreamByDefault): measured slower than SkinnyMma
// (8x4096x4096 22.9 us against 19.4 with the launcher's clusters of 4, 17.9 with clusters of 2; 60.8 against
// 44.2 us at K = 14336). JK_MATMUL_SKINNY (read at every launch): =mma SkinnyMma for every M <= 8, =stream
// SkinnyStream for every M <= 8 (SkinnyMma where it does not apply), =simt neither (tests and the lab).
constexpr int64_t kSkinnyMmaMinMBF16 = 4, kSkinnyMmaMinMF16 = 5;
constexpr bool kSkinnyStreamByDefault = false;

enum class SkinnyChoice { kSimt, kMma, kStream };

// SkinnyStream copies 4 k of a row of a at a time: 8-byte aligned in every batch matrix.
bool SkinnyStreamApplies(const MatmulProblem& p) {
  if (p.k % 4 != 0 || reinterpret_cast<uintptr_t>(p.a) % 8 != 0) return false;
  for (int d = 0; d < p.batch_rank; ++d)
    if (p.a_stride[d] % 4 != 0) return false;
  return true;
}

SkinnyChoice ChooseSkinny(const MatmulProblem& p) {
  if (p.dtype == DType::kF32 || p.m > mm::kSkinnyMaxM || p.n % 8 != 0 || !Aligned16(p.b)) return SkinnyChoice::kSimt;
  // Only with clusters (sm_90): without them a CTA's 8 warps alone split K, 64 CTAs at N = 4096; unmeasured.
  if (!SkinnyMmaSupport().clusters) return SkinnyChoice::kSimt;
  const char* env = std::getenv("JK_MATMUL_SKINNY");
  if (env != nullptr && std::strcmp(env, "simt") == 0) return SkinnyChoice::kSimt;
  if (env != nullptr && std::strcmp(env, "mma") == 0) return SkinnyChoice::kMma;
  const bool want_stream = env != nullptr && std::strcmp(env, "stream") == 0;
  if (!want_stream && p.m < (p.dtype == DType::kBF16 ? kSkinnyMmaMinMBF16 : kSkinnyMmaMinMF16))
    return SkinnyChoice::kSimt;
  if ((want_stream || kSkinnyStreamByDefault) && SkinnyStreamApplies(p)) return SkinnyChoice::kStream;
  return SkinnyChoice::kMma;
}

// 16-bit operands whose rows are not 16-byte aligned: MmaStaged unless JK_MATMUL_UNALIGNED (read at every
// launch) says simt (SimtTiled, the tier they had before) or mma (MmaStaged also for M <= 8, where by
// default SimtTiled keeps them: a 64-row tile would be mostly padding; unmeasured). H200
// (bench/lab/matmul_oddn_h200.md): 3.0-10.8x SimtTiled on every measured case, e.g. GPT-2's logits
// 8192x768x50257 5.13 ms against 34.1 (jnp 2.32), 4096x4096x4095 0.74 ms against 7.55 (jnp 0.56).
constexpr bool kMmaStagedByDefault = true;

bool UseMmaStaged(const MatmulProblem& p) {
  if (p.dtype == DType::kF32 || !IsAligned(p.a, 2) || !IsAligned(p.b, 2)) return false;
  const char* env = std::getenv("JK_MATMUL_UNALIGNED");
  if (env != nullptr && std::strcmp(env, "simt") == 0) return false;
  if (env != nullptr && std::strcmp(env, "mma") == 0) return true;
  return kMmaStagedByDefault && p.m > mm::kSkinnyMaxM;
}

// A lab knob read at every launch: a small positive integer, or `fallback` when unset or out of range.
int EnvInt(const char* name, int lo, int hi, int fallback) {
  const char* env = std::getenv(name);
  if (env == nullptr) return fallback;
  const int v = std::atoi(env);
  return v >= lo && v <= hi ? v : fallback;
}

// SkinnyMma: enough CTAs for ~4 per SM (each has 8 warps x 4 steps x 2 KiB of b in flight): column blocks
// of 64 times a cluster of up to 8 CTAs splitting K (a power of two: the ranks share the block's 512
// outputs), while every warp keeps at least one 16-deep k step. JK_MATMUL_SKINNY_CTAS_PER_SM (1-8)
// overrides the 4 (2 CTAs fit an SM, so 4 per SM is two waves).
// SkinnyStream: one wave (2 CTAs per SM), each warp streaming its longer k slice through the ring;
// JK_MATMUL_SKINNY_CLUSTER (1, 2, 4, 8) forces the cluster size, JK_MATMUL_SKINNY_STAGES=4 the 4-deep ring
// instead of 6 (for the lab). H200 at 8x4096x4096: clusters of 2 17.9 us, 4 22.9, 8 27.2; 4 stages as 6.
cudaError_t LaunchSkinny(cudaStream_t stream, const MatmulProblem& p, bool ring) {
  const int64_t col_blocks = CeilDiv(p.n, mm::kSkinnyMmaCols);
  const int64_t batches = std::min(p.batch_count, kMaxGridYZ);
  const int64_t per_sm = ring ? 2 : EnvInt("JK_MATMUL_SKINNY_CTAS_PER_SM", 1, 8, 4);
  int cluster = 1;
  const int64_t want = per_sm * NumSMs();
  // SkinnyMma: the smallest cluster reaching `want` CTAs; SkinnyStream: the largest one within it.
  while (cluster < mm::kSkinnyMmaClusterMax && col_blocks * batches * (ring ? 2 * cluster : cluster) < want + ring &&
         2 * cluster * mm::kSkinnyMmaWarps * 16 <= p.k)
    cluster *= 2;
  if (ring) {
    const int forced = EnvInt("JK_MATMUL_SKINNY_CLUSTER", 1, 8, 0);
    if (forced == 1 || forced == 2 || forced == 4 || forced == 8) cluster = forced;
  }
  const int64_t slices = int64_t{cluster} * mm::kSkinnyMmaWarps;
  const int64_t k_slice = CeilDiv(CeilDiv(p.k, slices), 16) * 16;
  const bool shallow = EnvInt("JK_MATMUL_SKINNY_STAGES", 4, 4, 0) == 4;
  ClusterLaunch launch_cfg(dim3(static_cast<unsigned>(col_blocks * cluster), 1, static_cast<unsigned>(batches)),
                           dim3(mm::kSkinnyMmaThreads), stream, cluster);
  cudaLaunchConfig_t& cfg = launch_cfg.cfg;
  return DispatchHalf(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto launch = [&](auto kernel, int smem) {
      if (smem > 0) {
        if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
            e != cudaSuccess)
          return e;
      }
      cfg.dynamicSmemBytes = static_cast<size_t>(smem);
      cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, p, cluster, k_slice);
      return e != cudaSuccess ? e : LastLaunchError();
    };
    if (!ring) return launch(mm::SkinnyMmaKernel<T>, 0);
    if (shallow) return launch(mm::SkinnyStreamKernel<T, 4>, mm::SkinnyStreamSmem<4>::kBytes);
    return launch(mm::SkinnyStreamKernel<T, 6>, mm::SkinnyStreamSmem<6>::kBytes);
  });
}

// SkinnyPipe (matmul_decode.cuh): 16-bit M <= 16 whose rows of a and b are 16-byte aligned in every batch
// matrix, on sm_90 (clusters). JK_MATMUL_PIPE (read at every launch): =0 never, =1 wherever it applies,
// unset: kPipeMinM <= M <= kPipeMaxM. H200 (bench/lab/matmul_small_s4_h200.md, K = N = 4096, CUPTI): bf16
// 11.1 / 11.2 / 12.7 us at M = 4 / 8 / 16 against 19.2 / 19.4 / 21.6 on the tiers before (SkinnyMma and the
// mma.sync tier); at M = 1 the SIMT SkinnyM tier stays (bf16 10.9 against 11.1, f16 8.9). M = 2, 3 are
// unmeasured: SkinnyM's time grows with M (10.9 us at 1, 19-21 at 4), SkinnyPipe's is flat.
constexpr int64_t kPipeMinM = 2, kPipeMaxM = 16;

bool SkinnyPipeApplies(const MatmulProblem& p) {
  if (p.dtype == DType::kF32 || p.m > 16 || p.k % 8 != 0 || p.n % 8 != 0 || !Aligned16(p.a) || !Aligned16(p.b))
    return false;
  for (int d = 0; d < p.batch_rank; ++d)
    if (p.a_stride[d] % 8 != 0 || p.b_stride[d] % 8 != 0) return false;
  return SkinnyMmaSupport().clusters;
}

bool UseSkinnyPipe(const MatmulProblem& p) {
  if (!SkinnyPipeApplies(p)) return false;
  const char* env = std::getenv("JK_MATMUL_PIPE");
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
  if (env == nullptr && std::getenv("JK_MATMUL_SKINNY") != nullptr) return false;  // a forced older decode tier
  if (env != nullptr && std::strcmp(env, "1") == 0) return true;
  return p.m >= kPipeMinM && p.m <= kPipeMaxM;
}

// SkinnyPipe's geometry: CW columns per CTA (JK_MATMUL_PIPE_CW = 64, 128 or 256; default 64) and the
// largest cluster of K ranks (a power of two, at most 8) that keeps the grid within ctas_per_sm x SMs
// CTAs (JK_MATMUL_PIPE_CTAS_PER_SM 1-4, default 1; JK_MATMUL_PIPE_CLUSTER forces 1/2/4/8), each rank
// with at least two stages of K. H200, bf16 8x4096x4096: CW 64 with one CTA per SM (clusters of 2, 128
// CTAs) 11.2 us; CW 128: 14.0 (clusters of 4), 17.8 (two per SM, clusters of 8); CW 64 two per SM 18.0;
// CW 256 20.4; the 8-deep ring 22.6. Fewer K ranks won at every measured shape; 8x14336x4096 (224 column
// blocks, no split) 35.8 us against 42.5 before; 8x4096x14336 with this default (clusters of 2) is
// unmeasured (CW 128 clusters of 4: 40.5 us, before 45.1). JK_MATMUL_PIPE_STAGES=8 takes an 8-deep ring instead of 4 (CW = 128).
// Session 15 (bench/lab/s15_h200.md calls 3-5): with the copies' index math hoisted out of the ring the default
// went 11.1 -> 9.9 us at 8x4096x4096 (jnp 7.1-7.4), 16x4096x4096 12.7 -> 11.8; still the best geometry:
// 6- / 8-deep rings at CW 64 10.1 / 12.0 (lab builds), clusters of 1 / 4 17.5 / 16.2, CW 128 (clusters of 4)
// 13.0, 32-column CTAs 11.6 at one or two CTAs per SM.
cudaError_t LaunchSkinnyPipe(cudaStream_t stream, const MatmulProblem& p) {
  const int cw = EnvInt("JK_MATMUL_PIPE_CW", 64, 256, 64);
  const int width = cw == 128 || cw == 256 ? cw : 64;
  const int64_t ks = 8192 / width;
  const int64_t col_blocks = CeilDiv(p.n, width);
  const int64_t batches = std::min(p.batch_count, kMaxGridYZ);
  const int64_t want = EnvInt("JK_MATMUL_PIPE_CTAS_PER_SM", 1, 4, 1) * NumSMs();
  int cluster = 1;
  while (cluster < 8 && col_blocks * batches * 2 * cluster <= want && 2 * cluster * 2 * ks <= p.k) cluster *= 2;
  const int forced = EnvInt("JK_MATMUL_PIPE_CLUSTER", 1, 8, 0);
  if (forced == 1 || forced == 2 || forced == 4 || forced == 8) cluster = forced;
  const int64_t k_rank = CeilDiv(CeilDiv(p.k, cluster), ks) * ks;
  const bool deep = width == 128 && EnvInt("JK_MATMUL_PIPE_STAGES", 8, 8, 0) == 8;  // an 8-deep ring (lab)
  // b's stages through the bulk tensor copy engine (JK_MATMUL_PIPE_TMA=1, 64-column CTAs; a 3-d map over b's
  // matrices, box 64 columns x 128 rows; no map, an encoder failure or odd batch strides: the cp.async ring). It won
  // where b streams from DRAM over the padded cp.async stages of before (session 15, bench/lab/s15_h200.md call 9:
  // bf16 8x14336x4096 34.7 -> 32.7 us), but loses to the swizzled ones everywhere (bench/lab/s23_h200.md call 11,
  // H200, us, cp.async / TMA, jnp): 8x14336x4096 32.1 / 33.6-34.1 (29.9), 8x4096x14336 31.4 / 32.2-32.8 (29.6),
  // 8x4096x4096 8.6 / 10.4 (7.6), 16x4096x4096 10.8 / 11.6 (7.7). Off by default.
  CUtensorMap map_b;
  std::memset(&map_b, 0, sizeof(map_b));
  bool use_tma = width == 64 && EnvInt("JK_MATMUL_PIPE_TMA", 0, 1, 0) == 1 && mm::tma::ProblemFits(p, 8);
  if (use_tma) {
    const int64_t b_matrices = mm::tma::MatrixCount(p, p.b_stride, p.k * p.n);
    const CUtensorMapDataType type =
        p.dtype == DType::kBF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    use_tma = mm::tma::EncodeMatrices3d(&map_b, type, 2, p.b, p.k, p.n, b_matrices, static_cast<uint32_t>(ks), 64);
  }
  ClusterLaunch launch_cfg(dim3(static_cast<unsigned>(col_blocks * cluster), 1, static_cast<unsigned>(batches)),
                           dim3(mm::kPipeThreads), stream, cluster);
  cudaLaunchConfig_t& cfg = launch_cfg.cfg;
  return DispatchHalf(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto launch = [&](auto kernel, int smem) {
      if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
          e != cudaSuccess)
        return e;
      cfg.dynamicSmemBytes = static_cast<size_t>(smem);
      cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, map_b, p, cluster, k_rank);
      return e != cudaSuccess ? e : LastLaunchError();
    };
    auto by_rows = [&](auto cw_tag) {
      constexpr int CW = decltype(cw_tag)::value;
      if (p.m <= 8) return launch(mm::SkinnyPipeKernel<T, CW, 1>, mm::PipeShape<CW, 1>::kSmemBytes);
      return launch(mm::SkinnyPipeKernel<T, CW, 2>, mm::PipeShape<CW, 2>::kSmemBytes);
    };
    if (deep) {
      if (p.m <= 8) return launch(mm::SkinnyPipeKernel<T, 128, 1, 8>, mm::PipeShape<128, 1, 8>::kSmemBytes);
      return launch(mm::SkinnyPipeKernel<T, 128, 2, 8>, mm::PipeShape<128, 2, 8>::kSmemBytes);
    }
    if (use_tma) {
      if (p.m <= 8) return launch(mm::SkinnyPipeKernel<T, 64, 1, mm::kPipeStages, true>, mm::PipeShape<64, 1>::kSmemBytes);
      return launch(mm::SkinnyPipeKernel<T, 64, 2, mm::kPipeStages, true>, mm::PipeShape<64, 2>::kSmemBytes);
    }
    if (width == 64) return by_rows(std::integral_constant<int, 64>{});
    if (width == 256) return by_rows(std::integral_constant<int, 256>{});
    return by_rows(std::integral_constant<int, 128>{});
  });
}

// SplitPipe (matmul_decode_split.cuh): SkinnyPipe's problems, K split into `ranks` ranks of k_rank rows (a multiple
// of the 32-row stage) over CTAs of 128 columns. Ranks: enough CTAs for kSplitCtasPerSm per SM, at most
// kSplitMaxRanks, each rank at least kSplitMinTiles stages (JK_MATMUL_SPLIT_RANKS forces 1-16, the lab's). XLA's
// decode kernel takes the same geometry (8 ranks, 256 CTAs at N = 4096).
constexpr int64_t kSplitCtasPerSm = 2, kSplitMinTiles = 4;
struct SplitGeometry {
  int64_t col_blocks = 0, batches = 0, ranks = 0, k_rank = 0;
  int64_t WorkspaceBytes(const MatmulProblem& p) const { return ranks * p.batch_count * p.m * p.n * 4; }
};
SplitGeometry SplitPipeGeometry(const MatmulProblem& p) {
  SplitGeometry g;
  g.col_blocks = CeilDiv(p.n, mm::kSplitCols);
  g.batches = std::min(p.batch_count, kMaxGridYZ);
  int64_t ranks = kSplitCtasPerSm * NumSMs() / (g.col_blocks * g.batches);
  ranks = std::min<int64_t>(ranks, CeilDiv(p.k, kSplitMinTiles * mm::kSplitKs));
  ranks = std::max<int64_t>(1, std::min<int64_t>(ranks, mm::kSplitMaxRanks));
  if (const int forced = EnvInt("JK_MATMUL_SPLIT_RANKS", 1, mm::kSplitMaxRanks, 0); forced > 0) ranks = forced;
  g.k_rank = CeilDiv(CeilDiv(p.k, ranks), mm::kSplitKs) * mm::kSplitKs;
  g.ranks = CeilDiv(p.k, g.k_rank);  // no empty rank
  return g;
}

// JK_MATMUL_DECODE (read at every launch): =split SplitPipe wherever it applies (one rank included), =cluster never
// (SkinnyPipe keeps its problems). Unset: SkinnyPipe's problems, and M = 1 with b of at least kSplitM1MinElems
// (SkinnyM's problems; JK_MATMUL_PIPE or JK_MATMUL_SKINNY set keeps them there), that split into >= 2 ranks. H200,
// bf16 1x4096x4096, CUPTI: 7.4 us against SkinnyM's 10.8 (jnp 7.6; bench/lab/s24_h200.md).
constexpr int64_t kSplitM1MinElems = int64_t{1} << 22;
bool UseSplitPipe(const MatmulProblem& p) {
  if (!SkinnyPipeApplies(p) || p.workspace == nullptr) return false;
  const char* env = std::getenv("JK_MATMUL_DECODE");
  if (env != nullptr && std::strcmp(env, "cluster") == 0) return false;
  const SplitGeometry g = SplitPipeGeometry(p);
  if (g.WorkspaceBytes(p) > p.workspace_bytes) return false;
  if (env != nullptr && std::strcmp(env, "split") == 0) return true;
  if (g.ranks < 2) return false;
  if (UseSkinnyPipe(p)) return true;
  return p.m == 1 && p.k * p.n >= kSplitM1MinElems && std::getenv("JK_MATMUL_PIPE") == nullptr &&
         std::getenv("JK_MATMUL_SKINNY") == nullptr;
}

cudaError_t LaunchSplitPipe(cudaStream_t stream, const MatmulProblem& p) {
  const SplitGeometry g = SplitPipeGeometry(p);
  float* ws = static_cast<float*>(p.workspace);
  const dim3 grid(static_cast<unsigned>(g.col_blocks), static_cast<unsigned>(g.ranks),
                  static_cast<unsigned>(g.batches));
  const dim3 sum_grid(static_cast<unsigned>(CeilDiv(p.n / 8, mm::kSplitSumThreads)), static_cast<unsigned>(p.m),
                      static_cast<unsigned>(g.batches));
  const bool epilogue = p.bias != nullptr || p.residual != nullptr || p.activation != Activation::kNone;
  return DispatchHalf(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Under the 48 KiB default (SplitShape's static_assert): no shared-memory opt-in.
    auto launch = [&](auto kernel, int smem) {
      kernel<<<grid, mm::kSplitThreads, smem, stream>>>(p, ws, g.k_rank);
      if (cudaError_t e = LastLaunchError(); e != cudaSuccess) return e;
      if (epilogue)
        mm::SplitSumKernel<T, true><<<sum_grid, mm::kSplitSumThreads, 0, stream>>>(p, ws, static_cast<int>(g.ranks));
      else
        mm::SplitSumKernel<T, false><<<sum_grid, mm::kSplitSumThreads, 0, stream>>>(p, ws, static_cast<int>(g.ranks));
      return LastLaunchError();
    };
    if (p.m <= 8) return launch(mm::SplitPipeKernel<T, 1>, mm::SplitShape<1>::kSmemBytes);
    return launch(mm::SplitPipeKernel<T, 2>, mm::SplitShape<2>::kSmemBytes);
  });
}

// Exact float32 with fewer than one wave of 64x64 tiles: split K over a cluster of `split` CTAs
// (SimtRegisterBlockedSplitKernel), `wide` picks 64x64 tiles (default) instead of 32x64.
// JK_MATMUL_SIMT_SPLIT (1, 2, 4, 8) forces the split, JK_MATMUL_SIMT_TILE=32|64 the tile (the lab).
// By default: the largest split keeping the grid within kSimtSplitCtasPerSm x SMs CTAs and every rank
// with at least kSimtSplitMinKTiles k-tiles; no split leaves the 32x64 kernel of before. H200
// (bench/lab/matmul_small_s4_h200.md, us, unsplit 32x64 first): 512x512x256 13.5 -> 64x64 split 2 10.8
// (split 4: 15.1, 32x64 split 2: 14.3); 512^3 24.3 -> 15.3; 256^3 13.3 -> split 8 6.5 (split 4: 6.9).
// More than one CTA per SM lost everywhere (32x64 split 4 at 512x512x256: 20.4). Ranks of at least 4 k-tiles
// since the vectorised reduction (bench/lab/s16_h200.md, calls 1, 4 and 7): 256^3 in clusters of 8 (2 k-tiles a
// rank) 7.1-7.4 us against 6.2-6.4 in clusters of 4 (jnp 3.9); the 2-k-tile minimum had picked 8.
constexpr int64_t kSimtSplitCtasPerSm = 1, kSimtSplitMinKTiles = 4;
// Clusters of 2 (64x64 tiles) run two 256-thread groups a CTA (SimtRegisterBlockedSplitKernel's kGroups), each on
// half the rank's k-tiles: 16 warps an SM instead of 8. H200 (bench/lab/s16_h200.md, us, one group / two):
// 512x512x256 9.5 / 9.2 (jnp 6.9), 512^3 14.1 / 13.5 (13.1), 384^3 11.6 / 11.1 (10.5); with 4 or 8 ranks two
// groups lost (512x512x256 w4 14.1 / 19.0). JK_MATMUL_SIMT_GROUPS=1|2 forces it (64x64 tiles; with
// JK_MATMUL_SIMT_SPLIT=1 the groups run without a cluster).
constexpr int kSimtGroupsForPairs = 2;

struct SimtSplit {
  int split = 1;
  bool wide = false;
  int groups = 1;  // 256-thread groups a CTA, each on its share of the rank's k-tiles (64x64 tiles only)
};

SimtSplit ChooseSimtSplit(const MatmulProblem& p, int64_t tiles_32x64, int64_t tiles_64x64) {
  SimtSplit s;
  if (!SkinnyMmaSupport().clusters) return s;
  s.wide = EnvInt("JK_MATMUL_SIMT_TILE", 32, 64, 64) != 32;
  const int forced = EnvInt("JK_MATMUL_SIMT_SPLIT", 1, 8, 0);
  if (forced == 1 || forced == 2 || forced == 4 || forced == 8) {
    s.split = forced;
  } else {
    const int64_t tiles = s.wide ? tiles_64x64 : tiles_32x64, bk = s.wide ? 16 : 32;
    while (s.split < 8 && tiles * 2 * s.split <= kSimtSplitCtasPerSm * NumSMs() &&
           2 * s.split * kSimtSplitMinKTiles * bk <= p.k)
      s.split *= 2;
  }
  const int groups = EnvInt("JK_MATMUL_SIMT_GROUPS", 1, 2, 0);
  s.groups = !s.wide ? 1 : groups != 0 ? groups : s.split == 2 ? kSimtGroupsForPairs : 1;
  return s;
}

template <typename Kernel>
cudaError_t LaunchSimtSplit(cudaStream_t stream, const MatmulProblem& p, Kernel kernel, int64_t bm, int64_t bn,
                            int cluster, int threads = mm::kSimtThreads) {
  dim3 grid = Grid(p, bm, bn);
  grid.x *= static_cast<unsigned>(cluster);
  ClusterLaunch launch_cfg(grid, dim3(threads), stream, cluster);
  cudaError_t e = cudaLaunchKernelEx(&launch_cfg.cfg, kernel, p, cluster);
  return e != cudaSuccess ? e : LastLaunchError();
}

// SimtRing (matmul_simt_ring.cuh) where 64x64 tiles would fill at most a quarter of the SMs and K <= 2048: 0 (not
// taken), 16 (16x32 tiles of 64 threads) or 32 (32x32 tiles of 128). There the split-K cluster kernel runs 4-8 ranks
// or the 32x64 tile runs alone, and the ring's many small CTAs win; with more tiles (two ranks) or long K (each ring
// CTA runs all of K) the split kernel does. H200 (bench/lab/s22_h200.md call 9, the kernel then, us, split-K or
// 32x64 / ring 16x32, jnp): 64^3 4.4 / 3.2 (1.9), 128^3 6.1 / 4.2 (2.5), 100x300x200 8.2 / 6.0 (6.0), 1000x100x100
// 6.7 / 5.6 (4.8), 32x2048x2048 38.8 / 31.6 (14.3), 256x512x1024 22.3 / 20.0 (13.6), 256^3 6.1 / 6.3 (a tie); lost
// (call 8): 384x256x256 6.3 / 6.8 (5.4). Session 23's running copy pointers (bench/lab/s23_h200.md calls 2-3, ring
// before / after): 128^3 4.2 / 3.9, 256^3 6.3 / 5.6, 384x256x256 6.9 / 6.4, 256x512x1024 20.0 / 18.4, 32x2048x2048
// 31.6 / 26.5, 1000x100x100 5.7 / 5.3. Outside the rule the split kernel still wins: 512x512x256 8.9 against the
// ring's 9.1-9.3 (XLA 6.8), 512^3 13.5 against 15.7.
// JK_MATMUL_SIMT=ring16 / ring32 forces one anywhere; any other value of it (noring, cpasync, noswizzle) turns it
// off, as does a forced split-K or k groups (the lab, the tests).
constexpr int64_t kSimtRingMaxK = 2048;
int SimtRingTile(const MatmulProblem& p, int64_t tiles_64x64, const char* env) {
  if (env != nullptr) return std::strcmp(env, "ring16") == 0 ? 16 : std::strcmp(env, "ring32") == 0 ? 32 : 0;
  if (std::getenv("JK_MATMUL_SIMT_SPLIT") != nullptr || std::getenv("JK_MATMUL_SIMT_GROUPS") != nullptr) return 0;
  return 4 * tiles_64x64 <= NumSMs() && p.k <= kSimtRingMaxK ? 16 : 0;
}

template <int BM, int BN, int TM, int kBK, int kStages>
cudaError_t LaunchSimtRingAs(cudaStream_t stream, const MatmulProblem& p) {
  using S = mm::SimtRingShape<BM, BN, TM, kBK, kStages>;
  static_assert(S::kSmemBytes <= 48 * 1024, "no opt-in past the default dynamic shared memory");
  mm::SimtRingKernel<BM, BN, TM, kBK, kStages><<<Grid(p, BM, BN), S::kThreads, S::kSmemBytes, stream>>>(p);
  return LastLaunchError();
}
// k-tiles 32 deep in a ring of 4; for K <= kSimtRingShallowMaxK 16 deep in a ring of 8 (less of the last k-tile
// padded: K = 100 takes 112 rows, not 128). H200 (bench/lab/s23_h200.md calls 3-4, us, 32x4 / 16x8, jnp):
// 1000x100x100 5.2-5.3 / 4.6-4.8 (4.7-4.9), 2000x64x48 3.8 / 3.4 (2.4), 128^3 3.8-3.9 / 3.8 (2.7-2.8), 64^3 3.0 / 3.0;
// from K = 256 on the deeper tiles win (512x512x256 9.2-9.3 / 9.3-9.4, 256x512x1024 18.1-18.4 / 19.6-19.7,
// 32x2048x2048 26.5 / 30.7-30.8). 64 x 3 (XLA's block_k and stages for 512x512x256) lost everywhere (10.3 there).
constexpr int64_t kSimtRingShallowMaxK = 128;
template <int BM, int BN, int TM>
cudaError_t LaunchSimtRing(cudaStream_t stream, const MatmulProblem& p) {
  if (p.k <= kSimtRingShallowMaxK) return LaunchSimtRingAs<BM, BN, TM, 16, 8>(stream, p);
  return LaunchSimtRingAs<BM, BN, TM, 32, 4>(stream, p);
}

}  // namespace

MatmulTier ChooseMatmulTier(const MatmulProblem& p) {
  const int64_t vec = 16 / ElementBytes(p.dtype);
  if (p.k == 0) return MatmulTier::kSimtTiled;
  if (UseSplitPipe(p)) return MatmulTier::kSplitPipe;
  if (UseSkinnyPipe(p)) return MatmulTier::kSkinnyPipe;
  switch (ChooseSkinny(p)) {
    case SkinnyChoice::kStream: return MatmulTier::kSkinnyStream;
    case SkinnyChoice::kMma: return MatmulTier::kSkinnyMma;
    case SkinnyChoice::kSimt: break;
  }
  if (p.m <= mm::kSkinnyMaxM && p.n % 8 == 0 && Aligned16(p.b)) return MatmulTier::kSkinnyM;
  if (p.dtype != DType::kF32 && VectorRows(p, vec) && mm::WgmmaTmaEligible(p)) return MatmulTier::kWgmmaTma;
  if (p.dtype != DType::kF32 && VectorRows(p, vec)) return MatmulTier::kMmaTensorCore;
  if (UseMmaStaged(p)) return MatmulTier::kMmaStaged;
  if (p.dtype == DType::kF32 && p.precision != MatmulPrecision::kHighest && VectorRows(p, vec))
    return mm::WgmmaTf32Eligible(p) ? MatmulTier::kWgmmaTf32 : MatmulTier::kMmaTensorCore;
  if (p.dtype == DType::kF32 && VectorRows(p, vec)) return MatmulTier::kSimtRegisterBlocked;
  return MatmulTier::kSimtTiled;
}

cudaError_t LaunchMatmul(cudaStream_t stream, const MatmulProblem& p) {
  const dim3 block(mm::kSimtThreads);
  switch (ChooseMatmulTier(p)) {
    case MatmulTier::kSimtTiled:
      return Dispatch<float, __nv_bfloat16, __half>(p.dtype, [&](auto tag) {
        mm::SimtTiledKernel<typename decltype(tag)::type><<<Grid(p, 64, 64), block, 0, stream>>>(p);
        return LastLaunchError();
      });
    case MatmulTier::kSkinnyM: {
      const dim3 grid(static_cast<unsigned>(CeilDiv(p.n, mm::kSkinnyCols)), 1,
                      static_cast<unsigned>(std::min(p.batch_count, kMaxGridYZ)));
      return Dispatch<float, __nv_bfloat16, __half>(p.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (p.m <= 1) mm::SkinnyMKernel<T, 1><<<grid, block, 0, stream>>>(p);
        else if (p.m <= 2) mm::SkinnyMKernel<T, 2><<<grid, block, 0, stream>>>(p);
        else if (p.m <= 4) mm::SkinnyMKernel<T, 4><<<grid, block, 0, stream>>>(p);
        else mm::SkinnyMKernel<T, 8><<<grid, block, 0, stream>>>(p);
        return LastLaunchError();
      });
    }
    case MatmulTier::kSkinnyMma:
      return LaunchSkinny(stream, p, /*ring=*/false);
    case MatmulTier::kSkinnyStream:
      return LaunchSkinny(stream, p, /*ring=*/true);
    case MatmulTier::kSkinnyPipe:
      return LaunchSkinnyPipe(stream, p);
    case MatmulTier::kSplitPipe:
      return LaunchSplitPipe(stream, p);
    case MatmulTier::kWgmmaTma:
      // A tensor map the driver refuses goes to the mma.sync tier, which takes the same shapes.
      if (cudaError_t e = mm::LaunchWgmmaTma(stream, p); e != cudaErrorNotSupported) return e;
      return Dispatch<float, __nv_bfloat16, __half>(p.dtype, [&](auto tag) {
        return mm::LaunchMma<typename decltype(tag)::type, false, false>(stream, p);
      });
    case MatmulTier::kWgmmaTf32:
      // A tensor map the driver refuses falls back to the mma.sync TF32 tier, which takes the same shapes.
      if (cudaError_t e = mm::LaunchWgmmaTf32(stream, p); e != cudaErrorNotSupported) return e;
      return mm::LaunchMma<float, false, false>(stream, p);
    case MatmulTier::kMmaTensorCore:
      return Dispatch<float, __nv_bfloat16, __half>(p.dtype, [&](auto tag) {
        return mm::LaunchMma<typename decltype(tag)::type, false, false>(stream, p);
      });
    case MatmulTier::kMmaStaged: {
      // a through registers only where its rows can be misaligned: the b-only kernel keeps a on cp.async.
      bool a_rows = p.k % 8 != 0 || !Aligned16(p.a);
      for (int d = 0; d < p.batch_rank && !a_rows; ++d) a_rows = p.a_stride[d] % 8 != 0;
      return DispatchHalf(p.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        return a_rows ? mm::LaunchMma<T, true, true>(stream, p) : mm::LaunchMma<T, false, true>(stream, p);
      });
    }
    case MatmulTier::kSimtRegisterBlocked: {
      // The largest tile that still leaves no SM idle: 128x128 tiles need ~2 waves of blocks to beat
      // 64x64 tiles' better balance; below one wave of 64x64 tiles, 32x64 tiles (2x4 per thread) with
      // BK = 32: with one block per SM the k loop is a chain of global latencies, so fewer, longer steps.
      // Shared memory is fed by register double buffering (H200, bench/lab/matmul_small_h200.md: 0.79x
      // cuBLAS at 4096^3, the cp.async ring 0.66x; equal at 512x512x256); JK_MATMUL_SIMT=cpasync takes
      // the ring (for the lab).
      auto tiles = [&](int64_t bm, int64_t bn) { return CeilDiv(p.m, bm) * CeilDiv(p.n, bn) * p.batch_count; };
      const int64_t sms = NumSMs();
      const char* env = std::getenv("JK_MATMUL_SIMT");
      const bool regs = !(env != nullptr && std::strcmp(env, "cpasync") == 0);
      // Session 8 lab: the 128x128 tile with a's tile swizzled (conflict-free stash); JK_MATMUL_SIMT=noswizzle
      // keeps the layout of before.
      const bool swizzle = !(env != nullptr && std::strcmp(env, "noswizzle") == 0);
      // Measured without gain at 4096^3 (bench/lab/matmul_tf32_h200.md): BK = 8 3.40 -> 4.73 ms, BK = 8 with
      // 2 blocks per SM (128 registers, spills) 3.42 ms.
      if (const int ring = SimtRingTile(p, tiles(64, 64), env); ring == 16) return LaunchSimtRing<16, 32, 2>(stream, p);
      else if (ring == 32) return LaunchSimtRing<32, 32, 2>(stream, p);
      if (tiles(128, 128) >= 2 * sms) {
        if (regs && swizzle)
          mm::SimtRegisterBlockedKernel<128, 128, 8, 8, 16, 1, 0, true><<<Grid(p, 128, 128), block, 0, stream>>>(p);
        else if (regs) mm::SimtRegisterBlockedKernel<128, 128, 8, 8, 16, 1, 0><<<Grid(p, 128, 128), block, 0, stream>>>(p);
        else mm::SimtRegisterBlockedKernel<128, 128, 8, 8, 8, 2, 4><<<Grid(p, 128, 128), block, 0, stream>>>(p);
      } else if (tiles(64, 64) >= sms) {
        if (regs) mm::SimtRegisterBlockedKernel<64, 64, 4, 4, 16, 2, 0><<<Grid(p, 64, 64), block, 0, stream>>>(p);
        else mm::SimtRegisterBlockedKernel<64, 64, 4, 4, 16, 2, 3><<<Grid(p, 64, 64), block, 0, stream>>>(p);
      } else if (const SimtSplit split = regs ? ChooseSimtSplit(p, tiles(32, 64), tiles(64, 64)) : SimtSplit{};
                 split.split > 1 || split.groups > 1) {
        if (split.groups == 2)  // two k groups a CTA (kSimtGroupsForPairs), with or without a cluster; clusters
                                // of at most 2 (the default's) issue 2 loads a round in the reduction, not 8
          return LaunchSimtSplit(stream, p,
                                 split.split <= 2 ? mm::SimtRegisterBlockedSplitKernel<64, 64, 4, 4, 16, 1, 2, 2>
                                                  : mm::SimtRegisterBlockedSplitKernel<64, 64, 4, 4, 16, 1, 2>,
                                 64, 64, split.split, 2 * mm::kSimtThreads);
        if (split.wide)
          return LaunchSimtSplit(stream, p, mm::SimtRegisterBlockedSplitKernel<64, 64, 4, 4, 16, 2>, 64, 64,
                                 split.split);
        return LaunchSimtSplit(stream, p, mm::SimtRegisterBlockedSplitKernel<32, 64, 2, 4, 32, 2>, 32, 64,
                               split.split);
      } else {
        if (regs) mm::SimtRegisterBlockedKernel<32, 64, 2, 4, 32, 2, 0><<<Grid(p, 32, 64), block, 0, stream>>>(p);
        else mm::SimtRegisterBlockedKernel<32, 64, 2, 4, 32, 2, 3><<<Grid(p, 32, 64), block, 0, stream>>>(p);
      }
      return LastLaunchError();
    }
  }
  return cudaErrorInvalidValue;
}

}  // namespace jk
