// SplitPipe: bf16/f16 decode shapes (M <= 16) as XLA's Triton decode kernel runs them: split-K over many small
// CTAs with no cluster, float32 partials to a workspace, then a second kernel that sums the ranks in a fixed order
// and applies the epilogue.
//
// Why not SkinnyPipe's one kernel (matmul_decode.cuh: 64-column CTAs of 8 warps, clusters of 2 summing over
// distributed shared memory)? The same copies, swizzled stages and math in XLA's geometry stream b faster: 128
// columns, 4 warps, a 4-deep ring of 32-deep k-tiles, 8 ranks = 256 CTAs at 8x4096x4096, two CTAs on most SMs and
// no cluster barrier (H200, bf16 8x4096x4096, one-pass Nsight Compute: the gemm 6.6 us + the sum 2.3 against
// SkinnyPipe's 9.6 and XLA's 6.8 + 2.2; bench/lab/s24_h200.md call 2).
//
// Stage layout (as SkinnyPipe's): b dense rows of kSplitCols columns, 16-byte chunk c of k-row r at c ^ (r % 8), so
// the copies fill whole 128-byte lines and the 8 rows of an ldmatrix fragment fall in distinct banks; a's rows padded
// by 16 bytes (80-byte pitch: the 8 fragment rows fall in distinct banks too).
//
// Math: out^T = b^T a^T on mma.sync m16n8k16 (pipe::SwizzledStep): the 16 mma rows are 16 columns of b
// (ldmatrix.trans), the 8 mma columns 8 rows of a; MG groups of 8 rows of a (M <= 8 MG).
//
// Requires (the launcher checks): K % 8 == 0, N % 8 == 0, a and b 16-byte aligned in every batch matrix, M <= 16,
// a workspace of ranks x batch x M x N floats.
#pragma once
#include <cstdint>
#include <type_traits>

#include "common/device.cuh"
#include "matmul/matmul_decode.cuh"  // pipe::Copy16, RunRing, SwizzledStep
#include "matmul/matmul_epilogue.cuh"

namespace jk::mm {

constexpr int kSplitCols = 128;                 // output columns a CTA
constexpr int kSplitWarps = 4;                  // one 32-column quarter each
constexpr int kSplitThreads = 32 * kSplitWarps;
constexpr int kSplitKs = 32;                    // k rows a stage (8 KiB of b)
constexpr int kSplitStages = 4;
constexpr int kSplitMaxRanks = 16;

template <int MG>
struct SplitShape {
  static constexpr int kARow = kSplitKs + 8;                        // elements a padded row of a's stage
  static constexpr int kBSlot = kSplitKs * kSplitCols * 2;          // bytes
  static constexpr int kASlot = 8 * MG * kARow * 2;
  static constexpr int kSmemBytes = kSplitStages * (kBSlot + kASlot);
  static constexpr int kTilesPerWarp = kSplitCols / 16 / kSplitWarps;  // 16-column mma tiles a warp
  static constexpr int kChunksPerRow = kSplitCols / 8;                 // 16-byte chunks a k-row of b
  static constexpr int kBRowsPerRound = kSplitThreads / kChunksPerRow;
  static constexpr int kBRounds = kSplitKs / kBRowsPerRound;
  static_assert(kBRounds * kBRowsPerRound == kSplitKs && kBRowsPerRound % 8 == 0, "whole rounds, a fixed swizzle");
  static_assert(8 * MG * (kSplitKs / 8) <= kSplitThreads, "one chunk of a a thread at most");
  static_assert(kSmemBytes <= 48 * 1024, "the launcher does not opt in to more shared memory");
};

// Grid: x = column blocks of kSplitCols, y = K ranks of k_rank rows (a multiple of kSplitKs), z = batch (strided).
// Rank r of batch z writes its partial sums of rows < M to ws[((z * ranks + r) * M + row) * N + col].
template <typename T, int MG>
__global__ void __launch_bounds__(kSplitThreads)
    SplitPipeKernel(MatmulProblem p, float* __restrict__ ws, int64_t k_rank) {
  using S = SplitShape<MG>;
  constexpr uint32_t kBRowBytes = kSplitCols * 2;
  extern __shared__ __align__(128) uint16_t split_smem[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kSplitCols;
  const int64_t ranks = gridDim.y, rank = blockIdx.y;
  const int64_t kbeg = rank * k_rank;
  const int64_t kend = kbeg + k_rank < p.k ? kbeg + k_rank : p.k;
  const int64_t ntiles = kend > kbeg ? (kend - kbeg + kSplitKs - 1) / kSplitKs : 0;
  const uint32_t tb = SmemAddress(split_smem), ta = tb + kSplitStages * S::kBSlot;
  const int q = lane / 8, r8 = lane % 8;
  // This lane's ldmatrix row of a's stage (B fragments: matrix q % 2 covers k + 8 (q & 1), row r8).
  const uint32_t a_frag = static_cast<uint32_t>((r8 * S::kARow + 8 * (q & 1)) * 2);
  // This thread's copies, fixed across stages: b chunk bc8 of rows br0 + j kBRowsPerRound (all with the same
  // br0 % 8, so one swizzled position), and at most one chunk of a (row ar, k chunk ac8).
  const int br0 = threadIdx.x / S::kChunksPerRow, bc8 = threadIdx.x % S::kChunksPerRow;
  const bool b_col_ok = n0 + 8 * bc8 < p.n;
  const uint32_t b_dst = static_cast<uint32_t>(br0 * kBRowBytes + 16 * (bc8 ^ (br0 % 8)));
  const bool a_has = static_cast<int>(threadIdx.x) < 8 * MG * (kSplitKs / 8);
  const int ar = threadIdx.x / (kSplitKs / 8), ac8 = threadIdx.x % (kSplitKs / 8);
  const bool a_row_ok = a_has && ar < p.m;
  const uint32_t a_dst = static_cast<uint32_t>((ar * S::kARow + 8 * ac8) * 2);

  for (int64_t z = blockIdx.z; z < p.batch_count; z += gridDim.z) {
    const BatchOffsets o = OffsetsOf(p, z);
    const uint16_t* a = static_cast<const uint16_t*>(p.a) + o.a;
    const uint16_t* b = static_cast<const uint16_t*>(p.b) + o.b;
    // This thread's sources at k = kbeg. A chunk outside the matrix (column past N, row past M) copies nothing
    // (src-size 0 zero-fills) from a fixed valid address: its steps are 0, so full tiles need no selects.
    const int64_t b_step = b_col_ok ? p.n : 0, a_step = a_row_ok ? 1 : 0;
    const uint16_t* b0 = b + (b_col_ok ? (kbeg + br0) * p.n + n0 + 8 * bc8 : 0);
    const uint16_t* a0 = a + (a_row_ok ? ar * p.k + kbeg + 8 * ac8 : 0);
    // Tile `tile` of this rank into `slot`; zeros past kend, N and M (a zero row of a times a row of b that may
    // hold infinities must not count, so both sides are zero-filled). Row tests only in a rank's last, partial tile.
    auto load = [&](int64_t tile, int slot) {
      const int64_t k0 = kbeg + tile * kSplitKs;
      const uint32_t sb = tb + static_cast<uint32_t>(slot * S::kBSlot);
      const uint16_t* bt = b0 + tile * kSplitKs * b_step;
      const uint16_t* at = a0 + tile * kSplitKs * a_step;
      const uint32_t sa = ta + static_cast<uint32_t>(slot * S::kASlot) + a_dst;
      if (k0 + kSplitKs <= kend) {
#pragma unroll
        for (int j = 0; j < S::kBRounds; ++j)
          pipe::Copy16(sb + b_dst + j * S::kBRowsPerRound * kBRowBytes, bt + j * S::kBRowsPerRound * b_step, b_col_ok);
        if (a_has) pipe::Copy16(sa, at, a_row_ok);
        return;
      }
#pragma unroll
      for (int j = 0; j < S::kBRounds; ++j) {
        const bool ok = b_col_ok && k0 + br0 + j * S::kBRowsPerRound < kend;
        pipe::Copy16(sb + b_dst + j * S::kBRowsPerRound * kBRowBytes, ok ? bt + j * S::kBRowsPerRound * b_step : b, ok);
      }
      if (a_has) {
        const bool ok = a_row_ok && k0 + 8 * ac8 < kend;
        pipe::Copy16(sa, ok ? at : a, ok);
      }
    };
    float acc[S::kTilesPerWarp][MG][4] = {};
    auto compute = [&](int slot) {
      const uint32_t sb = tb + static_cast<uint32_t>(slot * S::kBSlot);
      const uint32_t sa = ta + static_cast<uint32_t>(slot * S::kASlot) + a_frag;
#pragma unroll
      for (int kk = 0; kk < kSplitKs; kk += 16)
        pipe::SwizzledStep<T, MG, S::kTilesPerWarp, S::kARow, kBRowBytes>(
            acc, sa, sb, kk, q, r8, [&](int j) { return (warp + kSplitWarps * j) * 16; });
    };
    pipe::RunRing<kSplitStages>(ntiles, load, [](int) {}, compute);  // ends with every copy landed and read
    // acc[j][mg] = out^T rows (col + g, col + g + 8) x columns (2t, 2t + 1) of row group mg.
    float* part = ws + ((z * ranks + rank) * p.m) * p.n;
#pragma unroll
    for (int j = 0; j < S::kTilesPerWarp; ++j) {
      const int64_t col = n0 + (warp + kSplitWarps * j) * 16 + g;
#pragma unroll
      for (int mg = 0; mg < MG; ++mg) {
        const int64_t r0 = 8 * mg + 2 * t;
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int64_t row = r0 + (e & 1), c = col + 8 * (e >> 1);
          if (row < p.m && c < p.n) part[row * p.n + c] = acc[j][mg][e];
        }
      }
    }
  }
}

// out[z][row][col..col+7] = epilogue(sum over ranks 0, 1, ... of ws): a thread per 8 columns, grid (N / 8 / 32, M,
// batch), no index division. The fixed rank order keeps the result deterministic.
// kEpilogue = false (no bias, activation or residual): the sum is converted and stored, nothing else. This kernel
// is short enough that its cold instruction fetch shows: with the general epilogue (every activation inlined for 4
// columns) it took 2.2 us at 8x4096x4096 against XLA's 1.3 us reduction (H200, CUPTI).
// One warp a block: 256-column blocks spread 8x4096x4096's 1 MB of partials over 128 SMs (with 128 threads, 32 SMs
// pulled 32 KB each).
constexpr int kSplitSumThreads = 32;
template <typename T, bool kEpilogue>
__global__ void __launch_bounds__(kSplitSumThreads, 1) SplitSumKernel(MatmulProblem p, const float* __restrict__ ws,
                                                                      int ranks) {
  const int64_t col = 8 * (static_cast<int64_t>(blockIdx.x) * kSplitSumThreads + threadIdx.x);
  const int64_t row = blockIdx.y, plane = p.m * p.n;
  if (col >= p.n) return;
  for (int64_t z = blockIdx.z; z < p.batch_count; z += gridDim.z) {
    const Epilogue<T> ep(p, z, OffsetsOf(p, z));
    typename Epilogue<T>::Row8Inputs in{};
    if constexpr (kEpilogue) in = ep.LoadRow8(row, col);  // issued before the partials arrive
    const float* src = ws + z * ranks * plane + row * p.n + col;
    float v[8] = {};
    // Ranks in groups of 8, then 4, then 1, each group's loads issued together. Before (predicated loads of a zero
    // past the last rank, __ldcg, no minimum-blocks launch bound) ptxas kept each add next to its load, one L2
    // latency a rank: 3.4 us at 8 ranks and 5.0 at 16. The launch bound's 1 block per SM lets ptxas hold a group.
    int r = 0;
    auto group = [&](auto width) {
      constexpr int W = decltype(width)::value;
      for (; r + W <= ranks; r += W) {
        float4 x[W][2];
#pragma unroll
        for (int u = 0; u < W; ++u) {
          x[u][0] = __ldg(reinterpret_cast<const float4*>(src + (r + u) * plane));
          x[u][1] = __ldg(reinterpret_cast<const float4*>(src + (r + u) * plane + 4));
        }
#pragma unroll
        for (int u = 0; u < W; ++u) {
          v[0] += x[u][0].x, v[1] += x[u][0].y, v[2] += x[u][0].z, v[3] += x[u][0].w;
          v[4] += x[u][1].x, v[5] += x[u][1].y, v[6] += x[u][1].z, v[7] += x[u][1].w;
        }
      }
    };
    group(std::integral_constant<int, 8>{});
    group(std::integral_constant<int, 4>{});
    group(std::integral_constant<int, 1>{});
    if constexpr (kEpilogue) {
      ep.StoreRow8(row, col, v, in);
    } else {
      *reinterpret_cast<uint4*>(ep.out + row * p.n + col) = PackRow8<T>(v);
    }
  }
}

}  // namespace jk::mm
