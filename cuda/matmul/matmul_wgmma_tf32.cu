// Hopper TF32 tier launch: tensor maps over float32 matrices and the persistent grid.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/launch.h"
#include "matmul/matmul_tma_host.h"
#include "matmul/matmul_wgmma_tf32.cuh"
#include "matmul/matmul_wgmma_tf32.h"

namespace jk::mm {
namespace {

// Whether every problem runs 256-row tiles unless JK_MATMUL_TF32_BM=128 (the 128-row tile is unmeasured).
constexpr bool kTall256Only = true;

// Stages per tile height: as many as fit beside the 32 KiB of epilogue boxes (48 or 32 KiB a stage).
constexpr int kStagesBM256 = 4, kStagesBM128 = 6;

using tma::MatrixCount;

// A tensor map over `count` contiguous (rows, cols) float32 matrices, box (box_rows, 32 columns = 128 bytes).
bool EncodeF32(CUtensorMap* map, const void* base, int64_t rows, int64_t cols, int64_t count, uint32_t box_rows) {
  return tma::EncodeMatrices3d(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, base, rows, cols, count, box_rows, 32);
}

enum class Tf32Choice { kAuto, kMma, kWgmma };
Tf32Choice Tf32Override() {
  const char* env = std::getenv("JK_MATMUL_TF32");
  if (env != nullptr && std::strcmp(env, "mma") == 0) return Tf32Choice::kMma;
  if (env != nullptr && std::strcmp(env, "wgmma") == 0) return Tf32Choice::kWgmma;
  return Tf32Choice::kAuto;
}

// Where the tier runs by default: problems of at least 768^3 multiply-adds. H200
// (bench/lab/matmul_tf32_h200.md, against the mma.sync TF32 tier): 4096^3 348 us against 1271 (jnp 336),
// 8192^3 2770 against 9872, 2048^3 46.3 against 140.5, 2048x2048x512 16.8 against 49.3, 1000^3 23.5
// against 36.8, 768^3 18.8 against 28.2, 8 x 1024^3 50.5 against 187.6. Smaller problems are unmeasured
// and stay on mma.sync.
bool WgmmaTf32PaysOff(const MatmulProblem& p) {
  constexpr double kMinWork = 768.0 * 768.0 * 768.0;
  return static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) *
             static_cast<double>(p.batch_count) >= kMinWork;
}

// Whether a's tiles are rounded to TF32 in shared memory (kRoundA) or truncated by the tensor cores;
// JK_MATMUL_TF32_ROUND=0|1 (read at every launch) overrides the default.
// Off by default: kRoundA is unmeasured (the device budget ran out after the first run, which timed the
// truncating kernel: 1.6x jnp's error, bench/lab/matmul_tf32_h200.md); the lab's wg_round/wg_trunc decide.
constexpr bool kRoundAByDefault = false;
bool RoundA() {
  const char* env = std::getenv("JK_MATMUL_TF32_ROUND");
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
  if (env != nullptr && std::strcmp(env, "1") == 0) return true;
  return kRoundAByDefault;
}

// linear's kernel: the epilogue's activation is a template parameter (Tf32LinearEpilogue).
template <int BM, int STAGES>
auto LinearKernel(Activation act) {
  switch (act) {
    case Activation::kRelu: return WgmmaTf32Kernel<BM, STAGES, false, static_cast<int>(Activation::kRelu)>;
    case Activation::kGelu: return WgmmaTf32Kernel<BM, STAGES, false, static_cast<int>(Activation::kGelu)>;
    case Activation::kGeluTanh: return WgmmaTf32Kernel<BM, STAGES, false, static_cast<int>(Activation::kGeluTanh)>;
    case Activation::kSilu: return WgmmaTf32Kernel<BM, STAGES, false, static_cast<int>(Activation::kSilu)>;
    default: return WgmmaTf32Kernel<BM, STAGES, false, static_cast<int>(Activation::kNone)>;
  }
}

template <int BM, int STAGES>
cudaError_t LaunchTile(cudaStream_t stream, const MatmulProblem& p, const CUtensorMap& map_b,
                       const CUtensorMap& map_out, int64_t a_count) {
  CUtensorMap map_a;
  if (!EncodeF32(&map_a, p.a, p.m, p.k, a_count, BM)) return cudaErrorNotSupported;
  constexpr int kSmem = Tf32Tile<BM, STAGES>::kSmemBytes;
  // linear's epilogue in its own instantiations, so the plain matmul's kernel is the one measured without it.
  // linear's kernels do not round a (JK_MATMUL_TF32_ROUND applies to the plain matmul only).
  const bool fused = p.bias != nullptr || p.residual != nullptr || p.activation != Activation::kNone;
  auto kernel = fused      ? LinearKernel<BM, STAGES>(p.activation)
                : RoundA() ? WgmmaTf32Kernel<BM, STAGES, true>
                           : WgmmaTf32Kernel<BM, STAGES, false>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
      e != cudaSuccess)
    return e;
  const int64_t tiles = CeilDiv(p.m, BM) * CeilDiv(p.n, kTf32BN) * p.batch_count;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(tiles, NumSMs())));
  kernel<<<grid, kTf32Threads, kSmem, stream>>>(map_a, map_b, map_out, p);
  return LastLaunchError();
}

}  // namespace

bool WgmmaTf32Eligible(const MatmulProblem& p) {
  if (p.dtype != DType::kF32 || p.precision == MatmulPrecision::kHighest) return false;
  const Tf32Choice choice = Tf32Override();
  if (choice == Tf32Choice::kMma || (choice == Tf32Choice::kAuto && !WgmmaTf32PaysOff(p))) return false;
  return tma::ProblemFits(p, 4) && tma::DeviceRunsWgmma();
}

// 256-row tiles, or 128-row ones where 256-row tiles would leave most SMs idle (JK_MATMUL_TF32_BM=128|256,
// read at every launch, forces one, for tests and the lab).
cudaError_t LaunchWgmmaTf32(cudaStream_t stream, const MatmulProblem& p) {
  const int64_t a_count = MatrixCount(p, p.a_stride, p.m * p.k), b_count = MatrixCount(p, p.b_stride, p.k * p.n);
  CUtensorMap map_b, map_out;
  if (!EncodeF32(&map_b, p.b, p.k, p.n, b_count, kTf32BK) || !EncodeF32(&map_out, p.out, p.m, p.n, p.batch_count, 32))
    return cudaErrorNotSupported;
  // 128-row tiles where 256-row ones would leave over half the SMs idle, once measured (kTall256Only).
  bool tall = kTall256Only || CeilDiv(p.m, 256) * CeilDiv(p.n, kTf32BN) * p.batch_count > NumSMs() / 2;
  if (const char* env = std::getenv("JK_MATMUL_TF32_BM"); env != nullptr) {
    if (std::strcmp(env, "128") == 0) tall = false;
    if (std::strcmp(env, "256") == 0) tall = true;
  }
  return tall ? LaunchTile<256, kStagesBM256>(stream, p, map_b, map_out, a_count)
              : LaunchTile<128, kStagesBM128>(stream, p, map_b, map_out, a_count);
}

}  // namespace jk::mm
