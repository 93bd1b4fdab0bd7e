// Short rows (LayerNorm / RMSNorm, 64 bytes - 4 KB: bf16/f16 n = 32 ... 2048, float32 n = 16 ... 1024; every
// row exactly W * C 16-byte packs): W lanes per row with C packs each, everything the compiler can know made a
// template argument. Written for 16-bit rows of at most 512 bytes (below); float32 rows take it since session
// 15 (bench/lab/s15_h200.md: 32 columns 3.33 -> 3.07 us LayerNorm, 3.07 -> 2.88 RMSNorm, against the
// persistent short-row tier), and LayerNorm rows of 1-4 KB since session 18 (16-bit 512 and 1024 columns,
// float32 256-1024: 4-16% faster than the group and packed-row kernels, which were issue-bound; also rows of
// 384-3072 bytes with 3 or 6 packs per lane, such as 16-bit 192-1536 and float32 192-768 columns; the
// launcher's PackedDefault has the figures; R rows a lane group since session 28).
// Device code only; the launcher is norm_short.cu (LaunchShortRowsPacked).
//
// Why (bench/lab/norm_short_h200.md): at 49152 rows of 32-128 columns, L2-resident, the 16-bit row kernels
// are bound by instructions per element, not by waves or loads in flight: GroupPerRowRegisters' LayerNorm
// ran ~1.8x RMSNorm's SASS per row (64-bit index arithmetic, per-element bf16 conversions, runtime
// scale/bias/padding predicates), and the persistent short-row tier tied. Here:
//   - the row length is a template constant (no column predicates, no padding lanes) and offsets are 32-bit
//     (the launcher checks outer * n < 2^30);
//   - C packs per lane (two or four 16-byte loads) halve or quarter the lanes per row and so the shuffle
//     rounds of each reduction (softmax's finding on the same rows, bench/lab/softmax_short_lab_h200.txt);
//     at C * 8 == n one thread owns a row and there are no shuffles at all;
//   - bf16 -> float is a shift or a mask of the 32-bit word (a bf16 is the top half of a float32), float ->
//     16-bit one cvt per two values (__floats2bfloat162_rn / __floats2half2_rn);
//   - the row is converted once and kept as float32 across both passes;
//   - scale and bias (one parameter row for all rows: the launcher sends grouped parameters elsewhere) are
//     loaded once per thread and held packed (one register per pair, unpacked per use: 2 instructions per
//     pair, against twice the registers as float32); absent ones are 1 and 0, so the output pass has no
//     branches.
// Measured on an H200 (bench/lab/norm_packed_h200.md, 49152 rows, L2-resident): 1.2-1.6x the group kernel
// at 32-256 columns; against jnp 0.90-0.97x for LayerNorm at 32-128 columns (1.20-1.27x at 256), 0.92x
// for RMSNorm at 32 and 1.01-1.12x at 64-256. 4 packs per lane (one thread per row at 32 columns) lost at
// 32 columns (3.7-4.0 us against 2.3: 49152 threads are too few to cover the load latency).
// Statistics as in every tier: LayerNorm takes two exact passes over the register-resident row, of the data
// shifted by the row's first element (RowShift in norm_kernels.cuh explains why).
#pragma once
#include <cstring>
#include <type_traits>

#include "norm/norm_kernels.cuh"

namespace jk::norm {

constexpr int kPackedThreads = 256;

// BitsToFloat and Unpack2 (a word's two 16-bit values as float32): common/device.cuh.

// Round-to-nearest-even of two floats into one word (one cvt.rn.{bf16x2,f16x2}.f32 on sm_80+).
template <typename T>
__device__ __forceinline__ uint32_t Pack2(float lo, float hi) {
  uint32_t u;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    memcpy(&u, &h, 4);
  } else {
    const __half2 h = __floats2half2_rn(lo, hi);
    memcpy(&u, &h, 4);
  }
  return u;
}

// 1.0 in every element of a word: the scale of a LayerNorm/RMSNorm without one.
template <typename T>
constexpr uint32_t kOnePair = std::is_same_v<T, float>           ? 0x3f800000u
                              : std::is_same_v<T, __nv_bfloat16> ? 0x3f803f80u
                                                                 : 0x3c003c00u;

// Elements of T per 32-bit word, and a word's elements as float32 / float32 values as a word: the
// kernel below is written once over words (float32: one element, a bit copy; 16-bit: a pair).
template <typename T>
constexpr int kPerWord = 4 / static_cast<int>(sizeof(T));
template <typename T>
__device__ __forceinline__ void UnpackWord(uint32_t u, float* v) {
  if constexpr (sizeof(T) == 4) {
    v[0] = BitsToFloat(u);
  } else {
    const float2 f = Unpack2<T>(u);
    v[0] = f.x;
    v[1] = f.y;
  }
}
template <typename T>
__device__ __forceinline__ uint32_t PackWord(const float* v) {
  if constexpr (sizeof(T) == 4) {
    uint32_t u;
    memcpy(&u, v, 4);
    return u;
  } else {
    return Pack2<T>(v[0], v[1]);
  }
}

__device__ __forceinline__ uint4 LoadWords(const void* p) { return *reinterpret_cast<const uint4*>(p); }

// A row of 1.0 (or 0.0) in every element, the width of the tier's longest row (4 KB): a 16-bit row's absent scale
// (bias) reads from here, so the parameter loads take no branch and no register is set to a default first (8-12
// instructions of a 16-bit kernel's ~175 at 32 columns). This tier's float32 rows do not use them (see the kernel);
// the one-pack lanes' do (kOnesF32).
constexpr int kParamRowWords = 1024;
template <uint32_t kWord>
struct ParamRow {
  uint32_t w[kParamRowWords];
  constexpr ParamRow() : w() {
    for (int i = 0; i < kParamRowWords; ++i) w[i] = kWord;
  }
};
static __device__ const ParamRow<0x3f803f80u> kOnesBf16;
static __device__ const ParamRow<0x3c003c00u> kOnesHalf;
static __device__ const ParamRow<0x3f800000u> kOnesF32;  // the one-pack lanes' float32 rows (norm_short_onepack.cuh)
static __device__ const ParamRow<0u> kZeros;
template <typename T>
__device__ __forceinline__ const T* OnesRow() {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return reinterpret_cast<const T*>(kOnesBf16.w);
  else if constexpr (std::is_same_v<T, __half>) return reinterpret_cast<const T*>(kOnesHalf.w);
  else return reinterpret_cast<const T*>(kOnesF32.w);
}
__device__ __forceinline__ uint32_t Word(const uint4& u, int k) {
  return k == 0 ? u.x : k == 1 ? u.y : k == 2 ? u.z : u.w;
}

// Reduces E terms over A independent chains (A additions in flight): chain e % A takes acc = step(e, acc) for
// element e, from 0; then the chains are summed in order.
template <int A, int E, typename Step>
__device__ __forceinline__ float ChainReduce(Step step) {
  float acc[A];
#pragma unroll
  for (int a = 0; a < A; ++a) acc[a] = 0.f;
#pragma unroll
  for (int e = 0; e < E; ++e) acc[e % A] = step(e, acc[e % A]);
  float sum = acc[0];
#pragma unroll
  for (int a = 1; a < A; ++a) sum += acc[a];
  return sum;
}

// R rows a lane group per step (sessions 27-28; the launcher's PackedDefault has the figures): a lane's R rows share
// its held parameters and the loop's fixed cost, and their loads and reductions interleave. A warp's load of pack c
// covers 32 / W adjacent rows, R times.
template <typename T, Kind K, int W, int C, int R = 1>
__global__ void __launch_bounds__(kPackedThreads) ShortRowsPacked(Params<T> p) {
  static_assert(32 % W == 0, "a lane group is a power-of-two part of a warp");
  constexpr int P = 16 / static_cast<int>(sizeof(T)), N = W * C * P, E = C * P;  // row length, elements per lane
  constexpr int A = E < 4 ? E : 4;                                                // independent accumulators per lane
  constexpr int kWords = C * 4, V = kPerWord<T>;
  static_assert(N * static_cast<int>(sizeof(T)) <= 4 * kParamRowWords, "OnesRow / kZeros cover the row");
  // Thread indices unsigned: their divisions by powers of two are shifts (signed ones take 3-4 instructions each).
  const unsigned tid = threadIdx.x;
  const int lane = static_cast<int>(tid % W);
  const int rows = static_cast<int>(p.outer);
  constexpr int G = 32 / W;  // rows a warp covers per load
  const int step = static_cast<int>(gridDim.x * (kPackedThreads / W) * R);
  const float inv_n = 1.f / static_cast<float>(N);

  // Parameters, held for the whole loop (one row for every row: the launcher checks); absent ones are 1 and 0.
  // 16-bit rows read absent ones from the rows of ones / zeros: no branch, no register defaults (bf16 / f16 RMSNorm
  // at 32 columns 2.05-2.08 -> 1.98-2.02 us, bench/lab/s25_h200.md call 4). float32 rows keep the conditional loads:
  // with the row pointers ptxas spilled 8 bytes in the 128-column LayerNorm, which lost 3-5% (the same call).
  constexpr bool kParamRows = sizeof(T) == 2;
  const T* const scale = kParamRows && p.scale == nullptr ? OnesRow<T>() : p.scale;
  const T* const bias = kParamRows && p.bias == nullptr ? reinterpret_cast<const T*>(kZeros.w) : p.bias;
  uint32_t gw[kWords], bw[kWords];
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int col = (c * W + lane) * P;
    const uint4 g = kParamRows || scale != nullptr ? LoadWords(scale + col)
                                                   : make_uint4(kOnePair<T>, kOnePair<T>, kOnePair<T>, kOnePair<T>);
    const uint4 b = K == Kind::kLayerNorm && (kParamRows || bias != nullptr) ? LoadWords(bias + col)
                                                                             : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      gw[c * 4 + k] = Word(g, k);
      bw[c * 4 + k] = Word(b, k);
    }
  }
  // The loop bound is uniform per warp (full-mask shuffles): rows past the end run on zeros, never stored.
  const unsigned thread = blockIdx.x * kPackedThreads + tid;
  for (int warp_row = static_cast<int>(thread / 32 * (G * R)); warp_row < rows; warp_row += step) {
    int row[R];
    bool live[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      row[r] = warp_row + r * G + static_cast<int>(tid % 32 / W);
      live[r] = row[r] < rows;
    }
    // Keep the held pairs packed: without this the compiler may hoist their unpacking out of the loop
    // (float32 copies: E more registers each; at C = 4, 524 SASS instructions against 456).
#pragma unroll
    for (int w = 0; w < kWords; ++w) asm volatile("" : "+r"(gw[w]), "+r"(bw[w]));
    uint4 u[R][C];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int c = 0; c < C; ++c)
        u[r][c] = live[r] ? LoadWords(p.x + row[r] * N + (c * W + lane) * P) : make_uint4(0, 0, 0, 0);
    float f[R][E];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int w = 0; w < kWords; ++w) UnpackWord<T>(Word(u[r][w / 4], w % 4), f[r] + V * w);
    float mean[R], sq[R], rstd[R];
    if constexpr (K == Kind::kLayerNorm) {
      float shift[R], shifted_mean[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        shift[r] = W == 1 ? f[r][0] : __shfl_sync(0xffffffffu, f[r][0], 0, W);  // x[row, 0]: lane 0's element 0
        shifted_mean[r] = ChainReduce<A, E>([&](int e, float acc) {
          f[r][e] -= shift[r];  // exact near the shift
          return acc + f[r][e];
        });
      }
#pragma unroll
      for (int r = 0; r < R; ++r) shifted_mean[r] = WarpAllReduce<W>(shifted_mean[r], SumOp()) * inv_n;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        mean[r] = shift[r] + shifted_mean[r];
        sq[r] = ChainReduce<A, E>([&](int e, float acc) {
          f[r][e] -= shifted_mean[r];  // x - mean, f held across the passes
          return fmaf(f[r][e], f[r][e], acc);
        });
      }
    } else {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        mean[r] = 0.f;
        sq[r] = ChainReduce<A, E>([&](int e, float acc) { return fmaf(f[r][e], f[r][e], acc); });
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) rstd[r] = RstdFrom(WarpAllReduce<W>(sq[r], SumOp()) * inv_n, p.epsilon);

#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (!live[r]) continue;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        uint32_t o[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const int w = c * 4 + k;
          float g[V], b[V], v[V];
          UnpackWord<T>(gw[w], g);
          UnpackWord<T>(bw[w], b);
#pragma unroll
          for (int i = 0; i < V; ++i) {
            const float xn = f[r][V * w + i] * rstd[r];
            v[i] = K == Kind::kLayerNorm ? fmaf(xn, g[i], b[i]) : xn * g[i];
          }
          o[k] = PackWord<T>(v);
        }
        *reinterpret_cast<uint4*>(p.y + row[r] * N + (c * W + lane) * P) = make_uint4(o[0], o[1], o[2], o[3]);
      }
      if (K == Kind::kLayerNorm && lane == 0 && p.mean != nullptr) {  // RMSNorm returns no statistics
        p.mean[row[r]] = mean[r];
        p.rstd[row[r]] = rstd[r];
      }
    }
  }
}

}  // namespace jk::norm
