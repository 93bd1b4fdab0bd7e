// Hopper tier launches: tensor maps (cuTensorMapEncodeTiled through the runtime's driver entry point, so
// nothing links against libcuda) and the tile configuration by problem size.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/launch.h"
#include "matmul/matmul_wgmma.cuh"
#include "matmul/matmul_wgmma_swap.cuh"
#include "matmul/matmul_tma_host.h"
#include "matmul/matmul_wgmma_launch.h"

namespace jk::mm {
namespace {

using tma::MatrixCount;

// A tensor map over `count` contiguous (rows, cols) matrices of 16-bit elements (tma::EncodeMatrices3d).
bool EncodeMatrices(CUtensorMap* map, DType dt, const void* base, int64_t rows, int64_t cols, int64_t count,
                    uint32_t box_rows, uint32_t box_cols) {
  const CUtensorMapDataType type =
      dt == DType::kBF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  return tma::EncodeMatrices3d(map, type, 2, base, rows, cols, count, box_rows, box_cols);
}

// The TMA-store epilogue serves plain matmuls (no bias, residual or activation) unless
// JK_MATMUL_WGMMA_EPI=row8 (the lab times the fused epilogue on them that way).
bool IsFused(const MatmulProblem& p) {
  return p.bias != nullptr || p.residual != nullptr || p.activation != Activation::kNone;
}
bool UseTmaStore(const MatmulProblem& p) {
  if (IsFused(p)) return false;
  const char* env = std::getenv("JK_MATMUL_WGMMA_EPI");
  return env == nullptr || std::strcmp(env, "row8") != 0;
}

// Fused epilogues through TMA stores (StoreTileTmaFused) instead of StoreRow8: JK_MATMUL_WGMMA_EPI=tma or
// =row8 forces one (for the lab and tests). Measured on an H200 (bench/lab/matmul_linear_lab.py, bf16
// 4096^3, CUPTI, one process with the jnp composition; bench/lab/matmul_linear_h200.md, run 2), us with
// TMA stores against StoreRow8: ping-pong +bias gelu 203.5 vs 207.7 (jnp 220.4), +bias gelu +residual
// 215.9 vs 226.4 (jnp 221.6), +bias gelu_tanh 198.3 vs 200.0 (jnp 195.0); cooperative 207.4 vs 211.4,
// 217.9 vs 222.2, 203.2 vs 205.4. So TMA stores everywhere.
constexpr bool kFusedTmaByDefault = true;
bool UseFusedTma(const MatmulProblem& p) {
  if (!IsFused(p)) return false;
  const char* env = std::getenv("JK_MATMUL_WGMMA_EPI");
  if (env != nullptr && std::strcmp(env, "tma") == 0) return true;
  if (env != nullptr && std::strcmp(env, "row8") == 0) return false;
  return kFusedTmaByDefault;
}

constexpr bool kFusedPingPongByDefault = true;  // fused large problems' own rules (FusedLarge)

// Tiles of 128 x bn over the whole batch: the unit of the width, schedule and split-K rules below.
int64_t TileCount(const MatmulProblem& p, int64_t bn) {
  return CeilDiv(p.m, kWgmmaBM) * CeilDiv(p.n, bn) * p.batch_count;
}

// Fused epilogues with at least 2 x SMs tiles of 128x128 and N % 16 == 8 (FusedInPairs below; session 20 had them
// on every N) run in multicast pairs sharing b (WgmmaTmaKernel's
// kMcShareB, clusters of 2 along M): the epilogue's loads add to the mainloop's L2 traffic, and the pairs cut a
// CTA's reads a k-tile by a third (cooperative 128x256: 48 -> 32 KiB) or a quarter (ping-pong 128x128: 32 -> 24).
// Cooperative 128x256 pairs where they take fewer rounds of the clusters (a 256 x 256 pair tile counted as 0.95
// of two 256 x 128 ones, as WideTilePaysOff), else ping-pong 128x128 (in pairs only where N % 16 == 8: on
// sector-aligned rows the ping-pong pairs lost 1-2%). H200 (bench/lab/s20_h200.md, call 8, CUPTI, each variant
// twice in one process, us: ping-pong alone / cooperative 128x256 pairs / ping-pong pairs, jnp):
//   bf16 4096^3 +bias gelu +residual 211.6 / 206.3 / 213.4 (223.5)   +bias gelu 202.8 / 201.1 / 206.0 (222.3)
//   f16 4096^3 +bias gelu +residual  219.8 / 212.8 / 221.6 (228.1)   +bias 193.4 / 191.6 / 197.0 (173.5)
//   bf16 16384x1024x4096 +bias gelu  206.3 / 201.1 / 210.2 (223.9)   8192^3 +bias gelu 1551 / 1507 / - (1571)
//   bf16 4096x1000x4096 gelu +res    65.9 / 54.9 / 60.0 (61.6)       3000^3 +bias gelu 140.1 / 122.5 / 113.2 (104.4)
//   (4096x1000x4096: the cooperative 128x256 alone, not ping-pong, was the default there)
//   bf16 2048x4096x4096 +bias gelu   102.3 / 103.0 / 103.8 (112.8)   4096^3 +bias silu +res 203.2 / 202.6 / 207.5
// (3000^3: 144 pair tiles of 256 x 256 are 3 rounds of 66 clusters, 288 of 256 x 128 are 5: ping-pong pairs.
// 4096x1000x4096 has 256 tiles, under 2 x SMs: UseMulticastB's plain rule.) Since the cooperative boxed epilogue
// folds the bias into the accumulators too (call 11, us bias in the epilogue / folded): 4096^3 + bias gelu +
// residual 208.1 / 205.8, + bias gelu 203.7 / 200.1, + bias 192.7 / 188.5, f16 + residual 213.5 / 211.2.
bool FusedPairsWide(const MatmulProblem& p) {
  const int64_t clusters = NumSMs() / 2, pair_rows = CeilDiv(p.m, 2 * kWgmmaBM) * p.batch_count;
  const int64_t rounds256 = CeilDiv(pair_rows * CeilDiv(p.n, 256), clusters);
  const int64_t rounds128 = CeilDiv(pair_rows * CeilDiv(p.n, 128), clusters);
  return 2.0 * 0.95 * static_cast<double>(rounds256) < static_cast<double>(rounds128);
}
// Tile width by waves: a 128x256 tile costs `f` of two 128x128 ones (it loads less per flop), and the
// persistent grid runs ceil(tiles / SMs) waves of either, so 128x256 when 2 f waves(256) < waves(128). H200
// (bench/lab/matmul_pitch_h200.md, bf16, us 128 / 256): f ~0.95 on aligned shapes (4096^3 183 / 174; 3072^3,
// 5 waves against 3: 84 / 98.5, so 128 there), ~0.7 where N is not a multiple of 64 (3000^3 159 / 134,
// 2000^3 30.9 / 24.8 at 2 waves against 1, 4000x1000x4000 77 / 65). One wave of 128x128 or less stays
// 128x128 (1000^3: 10.9 / 15.1). Before: 128x256 only where its tiles filled every SM (2000^3 took 128).
// Ping-pong tiles are 128 x 128. JK_MATMUL_WGMMA=64, =128 or =256 forces a width (for the lab and tests).
bool WideTilePaysOff(const MatmulProblem& p) {
  const int64_t sms = NumSMs(), waves128 = CeilDiv(TileCount(p, 128), sms), waves256 = CeilDiv(TileCount(p, 256), sms);
  const double f = p.n % 64 == 0 ? 0.95 : 0.7;
  return 2.0 * f * static_cast<double>(waves256) < static_cast<double>(waves128);
}

// Fused problems of at least 2 x SMs tiles of 128x128 (the pairs' and ping-pong's gate).
bool FusedLarge(const MatmulProblem& p) {
  return IsFused(p) && kFusedPingPongByDefault && TileCount(p, 128) >= 2 * static_cast<int64_t>(NumSMs());
}
// In pairs only where b's rows start mid-sector (N % 16 == 8), as plain matmuls' UseMulticastB: since the
// cooperative epilogue's unrolled forms, the 128x256 tiles alone beat their pairs on aligned rows by 1-2% (H200,
// bench/lab/s21_h200.md calls 3 and 5, us pairs / alone, jnp: bf16 4096^3 + bias 179.8 / 176.4 (174.3), + bias gelu
// 189.8 / 186.9 (226.3), + bias gelu + residual 206.6 / 202.8 (227.3), 16384x1024x4096 + bias gelu + residual
// 206.9 / 203.4 (228.8), 2048x4096x4096 + bias gelu + residual 107.6 / 104.7 (113.6)); on 4096x1000x4096 the
// pairs keep their lead (+ bias gelu + residual 55.1 / 63.2).
bool FusedInPairs(const MatmulProblem& p) { return FusedLarge(p) && p.n % 16 != 0; }
// The fused large problems' 128x256 tiles: pairs decide by rounds of the clusters, tiles alone by waves, except
// with a residual and K <= kWideResMaxShortK: the 128x256 tile's residual epilogue (two TMA box buffers per
// warpgroup for four boxes) is fixed per tile while its mainloop shrinks with K. H200 (bench/lab/s22_h200.md call 2,
// + bias gelu + residual, us 128x256 / ping-pong / cooperative 128x128, jnp): 8192x1024x512 34.7 / 34.0 / 31.8
// (44.1), 8192x1024x1024 45.8 / 41.9 / 41.4 (50.2), 8192x2048x1024 82.0 / 77.7 / 78.0 (99.3), 8192x1024x2048
// 64.9 / 60.9 / 60.9 (76.4); at 4096^3 the 128x256 tile wins (201.7 / 204.8 ping-pong, s21_h200.md call 4).
constexpr int64_t kWideResMaxShortK = 2048;
bool FusedWide(const MatmulProblem& p) {
  if (FusedInPairs(p)) return FusedPairsWide(p);
  return WideTilePaysOff(p) && (p.residual == nullptr || p.k > kWideResMaxShortK);
}

// The schedule of `p`: JK_MATMUL_WGMMA_SCHED=pingpong or =coop forces one (for the lab and tests); unset,
// plain matmuls (TMA-store epilogue) stay cooperative (128x256 tiles: H200, bench/lab/matmul_wgmma_h200.md,
// 4096^3 174.2 us against 181.8 ping-pong), and fused ones with at least 2 x SMs tiles take ping-pong unless
// their 128x256 tiles pay off (FusedWide). Ping-pong alone against the cooperative 128x256 tile alone (H200,
// bench/lab/matmul_linear_h200.md, us): linear 4096^3 +bias gelu 204.5 / 214.3, +residual 221.4 / 225.2; 2048^3
// gelu (256 tiles, under 2 per SM) 36.2 / 35.1, hence the gate. Since the cooperative epilogue's unrolled forms
// (bench/lab/s21_h200.md calls 3-4): + bias gelu 186.9 / 198.4 (ping-pong alone), + residual 201.7 / 204.8.
// Short K (at most 1024) with the tiles alone takes the cooperative 128x128 tile instead: with few k-tiles a tile
// there is little mainloop for ping-pong to hide the other warpgroup's epilogue under. H200 (bench/lab/s21_h200.md
// call 13, GPT-2-small's projections, us ping-pong / cooperative 128x128, jnp): 8192x768x768 + bias 22.2 / 19.3
// (16.3), + bias + residual 23.9 / 22.5 (17.9); at K = 3072 (8192x768x3072 + bias + residual) 58.1 / 57.7 (54.7).
// As the default (s22_h200.md call 2): 22.4 / 19.3 (16.5), 24.3 / 22.7 (18.0); GPT-2-small's forward 8.02 -> 7.92 ms.
constexpr int64_t kCoopMaxK = 1024;
bool UsePingPong(const MatmulProblem& p) {
  const char* env = std::getenv("JK_MATMUL_WGMMA_SCHED");
  if (env != nullptr && std::strcmp(env, "pingpong") == 0) return true;
  if (env != nullptr && std::strcmp(env, "coop") == 0) return false;
  return FusedLarge(p) && !FusedWide(p) && (FusedInPairs(p) || p.k > kCoopMaxK);
}

// The fused epilogue's prefetches (kWgmmaPrefetch*): by default the next chunk's bias and residual loads
// only. H200, linear 4096^3 +bias gelu +residual (bench/lab/matmul_s3_h200.md): none 241.2 us, chunk ahead
// 222.8, L2 prefetch of the residual tiles 244.4, both 226.7 (the L2 prefetch competes with the mainloop's
// loads); +bias gelu 219.3 -> 211.4. JK_MATMUL_WGMMA_PREFETCH=0..3 sets the bits (for the lab).
// JK_MATMUL_WGMMA_ACT=libm computes gelu, tanh-gelu and silu in their libm forms (for the lab).
// JK_MATMUL_WGMMA_COOP_FOLD=0 adds the cooperative boxed epilogue's bias in the epilogue instead of folding it
// (kWgmmaCoopNoFold); JK_MATMUL_WGMMA_EPI_UNROLL=0 keeps that epilogue's loop form everywhere (kWgmmaEpiLoop), =1
// with a residual only (kWgmmaEpiResLoop); for the lab and tests.
int FusedEpilogueFlags() {
  int flags = kWgmmaPrefetchInputs;
  const char* env = std::getenv("JK_MATMUL_WGMMA_PREFETCH");
  if (env != nullptr && env[0] >= '0' && env[0] <= '3' && env[1] == '\0') flags = env[0] - '0';
  const char* act = std::getenv("JK_MATMUL_WGMMA_ACT");
  if (act != nullptr && std::strcmp(act, "libm") == 0) flags |= kWgmmaActLibm;
  const char* fold = std::getenv("JK_MATMUL_WGMMA_COOP_FOLD");
  if (fold != nullptr && std::strcmp(fold, "0") == 0) flags |= kWgmmaCoopNoFold;
  const char* unroll = std::getenv("JK_MATMUL_WGMMA_EPI_UNROLL");
  if (unroll != nullptr && std::strcmp(unroll, "0") == 0) flags |= kWgmmaEpiLoop;
  if (unroll != nullptr && std::strcmp(unroll, "1") == 0) flags |= kWgmmaEpiResLoop;
  return flags;
}

// The fused TMA epilogue's lean form (kWgmmaEpiBoxed, StoreTileTmaFusedBoxed) where it applies: bias pairs
// 4-byte aligned in every batch matrix, and a residual (if any) laid out as the output's matrices (row stride N,
// unit column stride, whole-matrix batch strides, 16-byte aligned), which TMA then loads into the output boxes.
// JK_MATMUL_WGMMA_BOXED=0 turns it off (for the lab and tests). H200, bf16 4096^3, ping-pong (CUPTI,
// bench/lab/s17_linear_lab_h200.txt): + bias + gelu 197.0 us against 200.7 in the general form, + residual 203.8
// against 212.0 (jnp 221.2 / 223.8); with the bias fold and the shared last tile (bench/lab/s17_h200.md).
// `flags`: the launch's FusedEpilogueFlags().
bool BoxedEpiloguePays(const MatmulProblem& p, int flags) {
  const char* env = std::getenv("JK_MATMUL_WGMMA_BOXED");
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
  if (flags & kWgmmaActLibm) return false;
  if (p.bias != nullptr) {
    if (reinterpret_cast<uintptr_t>(p.bias) % 4 != 0) return false;
    for (int d = 0; d < p.batch_rank; ++d)
      if (p.bias_stride[d] % 2 != 0) return false;
  }
  if (p.residual != nullptr) {
    if (p.res_col_stride != 1 || p.res_row_stride != p.n) return false;
    if (reinterpret_cast<uintptr_t>(p.residual) % 16 != 0) return false;
    if (MatrixCount(p, p.res_stride, p.m * p.n) == 0) return false;
  }
  return true;
}

// Split-K over a cluster of 2 CTAs (matmul_wgmma.cuh) where 128x128 tiles leave most SMs idle and K is
// long. H200 (bench/lab/matmul_s3_h200.md): 768^3 (36 tiles) 8.7 us against 13.3 on the mma.sync tier
// and XLA's 10.0. Not from 64 tiles on: 1000^3 (64 tiles, 1 CTA per SM) 12.9 us against 10.9 unsplit
// (likely fewer than 64 clusters of 2 co-resident), 1024x2048x1024 (128 tiles, two waves) 19.3 against
// 9.0. Smaller K and fewer tiles are unmeasured and stay where they were.
bool SplitKPaysOff(const MatmulProblem& p) {
  constexpr int64_t kMinTiles = 32, kMaxTiles = 63, kMinK = 768;
  const int64_t tiles = TileCount(p, 128);
  return p.k >= kMinK && tiles >= kMinTiles && tiles <= kMaxTiles;
}

// Split-K over a cluster of 2 (SplitKPaysOff) when every cluster fits on the GPU at once: the number of
// co-resident clusters of `kernel` (queried once per tile configuration and device: its variants share
// the shared-memory size and register budget; 0 when the query fails).
template <int BN, int STAGES, typename Kernel>
int ResidentClusters(Kernel kernel, cudaLaunchConfig_t cfg) {
  constexpr int kMaxDevices = 64;
  static int cache[kMaxDevices] = {0};  // 0 unknown, else 1 + the count; benign race (same value)
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return 0;
  if (cache[dev] == 0) {
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, kernel, &cfg) != cudaSuccess) n = 0;
    cudaGetLastError();
    cache[dev] = 1 + n;
  }
  return cache[dev] - 1;
}

// JK_MATMUL_WGMMA_SPLITK=1|2 forces split-K off or on (on: any size, one tile per cluster; for tests and
// the lab); otherwise on where SplitKPaysOff and every cluster is co-resident.
int SplitKOverride() {
  const char* env = std::getenv("JK_MATMUL_WGMMA_SPLITK");
  if (env != nullptr && std::strcmp(env, "1") == 0) return 1;
  if (env != nullptr && std::strcmp(env, "2") == 0) return 2;
  return 0;
}

// 128x64 tiles where 128x128 ones would fill at most half the SMs, so twice as many SMs work, each on half the
// columns (SplitKPaysOff's shapes included: 768^3, split-K's 36 clusters of 2 against 72 CTAs). H200
// (bench/lab/matmul_width_h200.md, bf16, us 128x64 / best other / jnp): 512^3 4.6 / 5.8 / 5.3, 768^3 5.5 / 8.7
// (split-K) / 8.3, 1024^3 6.6 / 8.4 / 5.9, 512x1024x1024 6.1 / 9.2 / 8.1, 1024x1024x4096 16.1 / 22.3 / 16.6.
// With N off a multiple of 64 too since the 128-byte L2 promotion (bench/lab/matmul_pitch2_h200.md): 1000^3
// 10.5 / 11.0 (with 256-byte promotion it had lost, 11.6 / 10.9), 768x1000x768 6.4 / 9.3 (split-K), linear
// 1000^3 +bias gelu +residual 13.3 / 16.2. Not below 16 tiles of 128x128 (unmeasured), not for ping-pong.
// JK_MATMUL_WGMMA=64 forces it (for the lab and tests).
bool NarrowTilePaysOff(const MatmulProblem& p) {
  const int64_t tiles = TileCount(p, 128);
  return tiles >= 16 && 2 * tiles <= NumSMs() && !UsePingPong(p);
}

// Multicast pairs sharing a (WgmmaTmaKernel's kMcShareA: clusters of 2 along N, each producer loading half of
// the a rows of both CTAs' stages). On sector-aligned rows of a they lose to the tiles alone (session 7,
// bench/lab/matmul_mc_h200.md: 1024^3 8.0 us against 6.6, 1024x1024x4096 18.9 against 16.1), but where a's rows
// start 16 bytes into a 32-byte sector (K % 16 == 8; see UseMulticastB) the 128x64 pairs win on plain matmuls:
// H200 (bench/lab/s20_h200.md, call 5, us alone / pairs, jnp): 1000^3 10.5 / 9.6 (7.0), 1000x1008x1000 10.0 /
// 9.2 (6.4), 512x1000x1000 8.9 / 8.4 (13.9), 1000x1000x4000 27.0 / 21.5 (17.8), 1024x1024x1000 8.9 / 9.0 (6.0).
// At 128x256 tiles they did not (3000x3008x3000 99.4 / 100.7, 4096x4096x3000 134.4 / 139.0).
// JK_MATMUL_WGMMA_MC=1|0 forces them on (128x64 tiles, and plain matmuls on 128x256) or off.
bool UseMulticast(const MatmulProblem& p, int bn) {
  const char* env = std::getenv("JK_MATMUL_WGMMA_MC");
  if (env != nullptr) return std::strcmp(env, "0") != 0;
  return bn == 64 && p.k % 16 != 0 && !IsFused(p);
}

// 128x256 tiles in clusters of 2 along M sharing b's panels through TMA multicast (WgmmaTmaKernel's kShareB),
// for plain matmuls whose b (and output) rows start 16 bytes into a 32-byte sector (N % 16 == 8): each such
// 128-byte box row costs 5 sectors and 2 L2 requests instead of 4 and 1, and at 128x256 tiles' ~9 TB/s of
// L2 -> SM traffic that tipped the kernel over the L2's bandwidth; sharing b cuts a CTA's reads from 48 to 32
// KiB a k-tile. H200 (bench/lab/s20_h200.md, call 3, us alone / pairs, jnp): 3000^3 121.7 / 103.3 (74.6),
// 4096x1000x4096 56.5 / 48.2 (45.7), 3008x3000x3008 106.2 / 100.7 (72.7); on sector-aligned rows the pairs'
// lockstep cost 1-4% (4096^3 174.2 / 175.9, 8192^3 1369 / 1388, 2000^3 25.2 / 26.3). JK_MATMUL_WGMMA_MCB=1|0
// forces them on (any shape on 128x256 or 128x64 tiles; the latter share b's k-rows: the lab) or off.
// Fused epilogues with >= 2 x SMs tiles: FusedInPairs above; with fewer, the plain rule (bf16 4096x1000x4096 +
// bias gelu + residual, 256 tiles of 128x128: 65.4 -> 55.0 us, jnp 61.6; + bias gelu 63.5 -> 53.7, jnp 61.2;
// bench/lab/s20_h200.md calls 7-8).
bool UseMulticastB(const MatmulProblem& p, int bn) {
  const char* env = std::getenv("JK_MATMUL_WGMMA_MCB");
  if (env != nullptr) return std::strcmp(env, "1") == 0;
  // Rows mid-sector: 128x256 tiles, and the fused large problems' ping-pong tiles too (FusedInPairs).
  return p.n % 16 != 0 && (bn == 256 || FusedLarge(p));
}

// The swapped-role kernel (matmul_wgmma_swap.cuh: 144 x 64 tiles in clusters of 4 sharing a's rows) where its
// cluster tiles all fit on the GPU at once (LaunchWgmmaSwap checks), for plain matmuls with a's or b's rows
// mid-sector (K or N % 16 != 0) and K >= 512. H200 (bench/lab/s27_h200.md calls 1-2, CUPTI, us default / swap, jnp;
// m x n x k): bf16 1000^3 9.5 / 8.1 (6.9), f16 9.4 / 8.1 (6.9), 1000x1008x1000 9.0 / 7.7 (6.3), 512x1000x1000 8.7 /
// 7.6 (12.8), 1000x1000x512 6.1 / 5.8 (4.4), 1000x1000x4000 26.1 / 17.6 (17.0), 1000x1000x8000 49.2 / 31.1 (27.2). Lost: in two rounds of clusters (1024x1024x1000, 32 clusters: 9.0 / 11.8;
// 1024^3 6.7 / 11.3), on sector-aligned rows (768^3 5.6 / 6.2), at K = 256 (1000x1000x256 4.7 / 4.9), and on
// problems of many tiles (2000^3 25.0 / 33.2, 4096^3 172 / 234: its m64n72 wgmmas run below the wide tiles' rate).
// JK_MATMUL_WGMMA_SWAP=1|0 (read at every launch) forces it on for every plain matmul the tier takes, or off.
enum class SwapUse { kOff, kIfOneWave, kForced };
SwapUse UseSwap(const MatmulProblem& p) {
  if (!UseTmaStore(p)) return SwapUse::kOff;
  const char* env = std::getenv("JK_MATMUL_WGMMA_SWAP");
  if (env != nullptr) return std::strcmp(env, "1") == 0 ? SwapUse::kForced : SwapUse::kOff;
  constexpr int64_t kMinK = 512;
  return p.k >= kMinK && (p.k % 16 != 0 || p.n % 16 != 0) ? SwapUse::kIfOneWave : SwapUse::kOff;
}

template <typename T>
cudaError_t LaunchWgmmaSwap(cudaStream_t stream, const MatmulProblem& p, int64_t a_count, int64_t b_count, SwapUse use) {
  constexpr int kStages = 7;
  using C = WgmmaSwapTile<kStages>;
  CUtensorMap map_a, map_b, map_out;
  if (!EncodeMatrices(&map_a, p.dtype, p.a, p.m, p.k, a_count, kSwapShareRows, kWgmmaBK) ||
      !EncodeMatrices(&map_b, p.dtype, p.b, p.k, p.n, b_count, kWgmmaBK, kSwapCols) ||
      !EncodeMatrices(&map_out, p.dtype, p.out, p.m, p.n, p.batch_count, kSwapHalf, kSwapCols))
    return cudaErrorNotSupported;
  auto kernel = WgmmaSwapKernel<T, kStages>;
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes);
  if (e != cudaSuccess) return e;
  const int64_t tiles = WgmmaSwapCounts(p).tiles;
  ClusterLaunch launch(dim3(static_cast<unsigned>(kSwapCluster * std::min<int64_t>(tiles, NumSMs()))),
                       dim3(kWgmmaThreads), stream, kSwapCluster);
  launch.cfg.dynamicSmemBytes = C::kSmemBytes;
  // Persistent clusters: as many as fit on the GPU at once (each needs 4 free SMs of one GPC).
  const int resident = ResidentClusters<kSwapCols, kStages>(kernel, launch.cfg);
  if (resident < 1 || (use == SwapUse::kIfOneWave && tiles > resident)) return cudaErrorNotSupported;
  launch.cfg.gridDim = dim3(static_cast<unsigned>(kSwapCluster * std::min<int64_t>(tiles, resident)));
  e = cudaLaunchKernelEx(&launch.cfg, kernel, map_a, map_b, map_out, p);
  return e != cudaSuccess ? e : LastLaunchError();
}

template <typename T, int BN, int STAGES>
cudaError_t LaunchWgmmaTile(cudaStream_t stream, const MatmulProblem& p, int64_t a_count, int64_t b_count) {
  using C = WgmmaTile<BN, STAGES>;
  // The output's batch matrices are contiguous (out + z * m * n); without a map the fused epilogue stores.
  const bool fused_tma = UseFusedTma(p);
  const bool want_tma_store = UseTmaStore(p) || fused_tma;
  // Multicast pairs (128x64 and 128x256 tiles with TMA-store epilogues, unless split-K is forced), where an
  // instantiation exists: sharing a (each producer loads 64 rows of a: 128x64 plain or fused, 128x256 plain),
  // or sharing b (at 128x64 each loads 32 k-rows of b: plain; 128x256 plain or fused).
  // Ping-pong 128x128 fused tiles share b (FusedInPairs where N % 16 == 8; JK_MATMUL_WGMMA_MCB=1 forces it).
  const bool pingpong = BN == 128 && UsePingPong(p);
  const bool pair_width = (BN == 64 || BN == 256 || (pingpong && fused_tma)) && want_tma_store && SplitKOverride() != 2;
  const bool share_a = pair_width && BN != 128 && UseMulticast(p, BN) && (BN == 64 || !fused_tma);
  const bool share_b = pair_width && !share_a && UseMulticastB(p, BN) && (BN != 64 || !fused_tma);
  CUtensorMap map_a, map_b, map_out;
  if (!EncodeMatrices(&map_a, p.dtype, p.a, p.m, p.k, a_count, share_a ? 64 : kWgmmaBM, kWgmmaBK) ||
      !EncodeMatrices(&map_b, p.dtype, p.b, p.k, p.n, b_count, share_b && BN == 64 ? 32 : kWgmmaBK, 64))
    return cudaErrorNotSupported;
  const bool tma_store = want_tma_store && EncodeMatrices(&map_out, p.dtype, p.out, p.m, p.n, p.batch_count, 64, 64);
  if ((share_a || share_b) && !tma_store) return cudaErrorNotSupported;  // the pairs' kernels store through TMA
  if (!tma_store) map_out = map_a;  // never read
  // The boxed epilogue's residual map (64x64 boxes over the residual's matrices, like the output's).
  CUtensorMap map_res = map_a;  // never read unless the residual goes through it
  const int epi_flags = FusedEpilogueFlags();
  bool boxed = fused_tma && tma_store && BoxedEpiloguePays(p, epi_flags);
  if (boxed && p.residual != nullptr)
    boxed = EncodeMatrices(&map_res, p.dtype, p.residual, p.m, p.n, MatrixCount(p, p.res_stride, p.m * p.n), 64, 64);
  if (BN == 64 && !tma_store) return cudaErrorNotSupported;  // 128 x 64 tiles have TMA-store epilogues only
  auto kernel = WgmmaTmaKernel<T, BN, STAGES, true, false>;
  if constexpr (BN == 64) {  // cooperative with TMA stores only (checked above)
    if (fused_tma) kernel = WgmmaTmaKernel<T, BN, STAGES, true, false, true>;
    if (share_a)
      kernel = fused_tma ? WgmmaTmaKernel<T, BN, STAGES, true, false, true, kMcShareA>
                         : WgmmaTmaKernel<T, BN, STAGES, true, false, false, kMcShareA>;
    if (share_b) kernel = WgmmaTmaKernel<T, BN, STAGES, true, false, false, kMcShareB>;
  } else {
    kernel = WgmmaTmaKernel<T, BN, STAGES, false, false>;
    if (tma_store) kernel = fused_tma ? WgmmaTmaKernel<T, BN, STAGES, true, false, true> : WgmmaTmaKernel<T, BN, STAGES, true, false>;
  }
  if constexpr (BN == 256) {
    if (share_b)
      kernel = fused_tma ? WgmmaTmaKernel<T, BN, STAGES, true, false, true, kMcShareB>
                         : WgmmaTmaKernel<T, BN, STAGES, true, false, false, kMcShareB>;
    if (share_a) kernel = WgmmaTmaKernel<T, BN, STAGES, true, false, false, kMcShareA>;
  }
  if constexpr (BN == 128) {
    if (pingpong) {
      kernel = WgmmaTmaKernel<T, BN, STAGES, false, true>;
      if (tma_store)
        kernel = fused_tma ? WgmmaTmaKernel<T, BN, STAGES, true, true, true> : WgmmaTmaKernel<T, BN, STAGES, true, true>;
      if (share_b) kernel = WgmmaTmaKernel<T, BN, STAGES, true, true, true, kMcShareB>;
    }
  }
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes);
  if (e != cudaSuccess) return e;
  const int64_t tiles = TileCount(p, BN);
  ClusterLaunch launch(dim3(static_cast<unsigned>(2 * tiles)), dim3(kWgmmaThreads), stream, 2);
  cudaLaunchConfig_t& cfg = launch.cfg;
  cfg.dynamicSmemBytes = C::kSmemBytes;
  int split = SplitKOverride();
  if (split == 0) split = BN != 64 && SplitKPaysOff(p) && tiles <= ResidentClusters<BN, STAGES>(kernel, cfg) ? 2 : 1;
  if (pingpong) split = 1;
  cfg.gridDim = dim3(static_cast<unsigned>(split > 1 ? split * tiles : std::min<int64_t>(tiles, NumSMs())));
  if (share_a || share_b) {  // persistent clusters of 2, one pair of tiles (128 x 2 BN or 256 x BN) at a time
    split = 2;
    const int64_t pairs = p.batch_count * CeilDiv(p.m, WgmmaStepM(share_b)) * CeilDiv(p.n, WgmmaStepN(BN, share_a));
    cfg.gridDim = dim3(static_cast<unsigned>(2 * std::min<int64_t>(pairs, NumSMs() / 2)));
  }
  cfg.numAttrs = split > 1 ? 1 : 0;
  e = cudaLaunchKernelEx(&cfg, kernel, map_a, map_b, map_out, map_res, p, epi_flags | (boxed ? kWgmmaEpiBoxed : 0),
                         split);
  return e != cudaSuccess ? e : LastLaunchError();
}

}  // namespace

// Whether the tier runs without JK_MATMUL_WGMMA set (any other value than "0" turns it on for every
// eligible shape, whatever its size).
constexpr bool kWgmmaByDefault = true;

// By default only where it was measured faster than the mma.sync tier: K >= 64 and at least 64 tiles of
// 128x128, or 128x64 tiles (NarrowTilePaysOff), or split-K. H200 (bench/lab/matmul_wgmma_h200.md,
// matmul_small_h200.md, matmul_width_h200.md): 0.95-1.0x cuBLAS from 2048^3 up, 1000^3 10.8 us against 20.1
// on mma.sync, at K = 256-768 (GPT-2-small's projections, 2048x2048x512) 0.78-0.88x cuBLAS against
// 0.16-0.27x on mma.sync; 128x64 tiles at 512^3 4.6 us against 9.5. K of 64-255 since session 21
// (bench/lab/s21_h200.md call 11, us wgmma / mma.sync, jnp): GPT-2-small's attention scores, 96 batched
// 1024x1024x64, 67.7 / 477.1 (62.7); the same at K = 128 74.0 / 517.0 (69.7); one 1024x1024x64 3.7 / 7.4 (2.6).
// Fewer tiles and K < 64 are unmeasured and stay on mma.sync.
bool WgmmaPaysOff(const MatmulProblem& p) {
  constexpr int64_t kMinTiles = 64, kMinK = 64;
  return (p.k >= kMinK && (TileCount(p, 128) >= kMinTiles || NarrowTilePaysOff(p))) ||
         SplitKPaysOff(p);
}

bool WgmmaTmaEligible(const MatmulProblem& p) {
  if (p.dtype != DType::kBF16 && p.dtype != DType::kF16) return false;
  const char* env = std::getenv("JK_MATMUL_WGMMA");
  if (env != nullptr ? std::strcmp(env, "0") == 0 : !(kWgmmaByDefault && WgmmaPaysOff(p))) return false;
  return tma::ProblemFits(p, 8) && tma::DeviceRunsWgmma();
}

cudaError_t LaunchWgmmaTma(cudaStream_t stream, const MatmulProblem& p) {
  const int64_t a_count = MatrixCount(p, p.a_stride, p.m * p.k), b_count = MatrixCount(p, p.b_stride, p.k * p.n);
  const bool pingpong = UsePingPong(p);
  int bn = pingpong ? 128 : FusedLarge(p) ? (FusedWide(p) ? 256 : 128)
                            : WideTilePaysOff(p) ? 256 : NarrowTilePaysOff(p) ? 64 : 128;
  if (const char* env = std::getenv("JK_MATMUL_WGMMA"); env != nullptr) {
    if (std::strcmp(env, "64") == 0) bn = 64;
    if (std::strcmp(env, "128") == 0) bn = 128;
    if (std::strcmp(env, "256") == 0) bn = 256;
  }
  auto launch = [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (const SwapUse use = UseSwap(p); use != SwapUse::kOff) {
      if (cudaError_t e = LaunchWgmmaSwap<T>(stream, p, a_count, b_count, use); e != cudaErrorNotSupported) return e;
    }
    if (bn == 64) {
      // 128x64 tiles serve the TMA-store epilogues only: elsewhere 128x128.
      if (cudaError_t e = LaunchWgmmaTile<T, 64, 8>(stream, p, a_count, b_count); e != cudaErrorNotSupported) return e;
      return LaunchWgmmaTile<T, 128, 6>(stream, p, a_count, b_count);
    }
    return bn == 256 ? LaunchWgmmaTile<T, 256, 4>(stream, p, a_count, b_count)
                     : LaunchWgmmaTile<T, 128, 6>(stream, p, a_count, b_count);
  };
  return DispatchFloat<float, __nv_bfloat16, __half>(p.dtype, cudaErrorInvalidValue, [&](auto tag) {
    if constexpr (std::is_same_v<typename decltype(tag)::type, float>) return cudaErrorNotSupported;
    else return launch(tag);
  });
}

}  // namespace jk::mm
