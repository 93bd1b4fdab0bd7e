// kTiledSmallCta (lab tier, JK_TRANSPOSE_TIERS=smallcta): XLA's small-problem geometry. Problems of a few
// MB (2048x512) finish in ~2 us in one wave; session 3's ncu run read XLA's kernels for them as many one- or
// two-warp blocks on 1-4 KB tiles (float32: 4096 blocks of 32 threads on 16x16 tiles), which the 16-byte
// swizzled tile (transpose_kernels.cuh, 128-byte tile rows) cannot express. This kernel can:
//
//   tile kTile x kTile elements, kThreads threads (one warp and up), accesses of kVB bytes (4, 8 or 16)
//   on both sides, a padded tile whose row pitch is chosen at compile time to minimise bank conflicts of
//   the actual lane pattern (PickPitchWords), compact geometry (TiledArgs32) only.
//
// Measured on an H200 (bench/lab/transpose_s4_h200.md), 16 geometries all lost to the default small tier,
// the more the smaller their blocks (float32 2048x512: 4.00 us on 16x16 one-warp tiles, 2.53 on 32x32 with
// 64 threads, 2.34 for the default's 512 blocks of 128 threads): per-block cost dominates there.
//
// Requires na and nb multiples of kV = kVB / kE and both buffers kVB-aligned (the launcher checks), so each
// access is wholly inside or outside the array.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "common/device.cuh"
#include "transpose/transpose_kernels.cuh"

namespace jk::transpose {

template <int kE, int kTile, int kThreads, int kVB>
struct SmallCta {
  static constexpr int kV = kVB >= kE ? kVB / kE : 1;  // elements per access
  static constexpr int kSlots = kTile / kV;             // accesses per tile row
  static constexpr int kSteps = kTile * kSlots / kThreads;
  static constexpr int kWord = kE == 8 ? 8 : 4;         // shared-memory store granularity
  static constexpr int kWordsPerAccess = kVB / kWord;   // >= 1: kVB >= kE and kVB >= 4
  static_assert(kVB >= 4 && kVB >= kE && kVB % kE == 0, "accesses of whole elements, at least a word");
  static_assert(kTile % kV == 0 && kSteps >= 1 && kTile * kSlots % kThreads == 0, "tile / block mismatch");
  static_assert(kThreads % 32 == 0, "whole warps");
};

// Worst-case bank conflicts (wavefronts) of one warp step, write phase plus read phase, for a row pitch of
// W 4-byte words. Lane l of step 0 covers (row or output row l / kSlots, slot l % kSlots) in both phases.
// Lanes touching the same word share a wavefront; distinct words in one bank serialise.
constexpr int Wavefronts(const int* words, int n) {
  int count[32] = {};
  for (int i = 0; i < n; ++i) {
    bool seen = false;
    for (int j = 0; j < i; ++j) seen |= words[j] == words[i];
    if (!seen) ++count[words[i] % 32];
  }
  int worst = 0;
  for (int b = 0; b < 32; ++b) worst = worst > count[b] ? worst : count[b];
  return worst;
}

template <int kE, int kTile, int kThreads, int kVB>
constexpr int ConflictCost(int W) {
  using S = SmallCta<kE, kTile, kThreads, kVB>;
  constexpr int kLanes = 32 < kTile * S::kSlots ? 32 : kTile * S::kSlots;
  int cost = 0;
  int words[64] = {};
  // Write: each lane stores its access as kWordsPerAccess words of kWord bytes at (row, slot * kVB + w).
  for (int w = 0; w < S::kWordsPerAccess; ++w) {
    int n = 0;
    for (int l = 0; l < kLanes; ++l)
      for (int h = 0; h < S::kWord / 4; ++h)
        words[n++] = (l / S::kSlots) * W + ((l % S::kSlots) * kVB + w * S::kWord) / 4 + h;
    cost += Wavefronts(words, n);
  }
  // Read: each lane reads element k of its access down a tile column: row slot * kV + k, column a.
  for (int k = 0; k < S::kV; ++k) {
    int n = 0;
    for (int l = 0; l < kLanes; ++l) {
      const int byte0 = ((l % S::kSlots) * S::kV + k) * W * 4 + (l / S::kSlots) * kE;
      for (int b = byte0; b < byte0 + kE; b += 4) words[n++] = b / 4;
    }
    cost += Wavefronts(words, n);
  }
  return cost;
}

// Row pitch in 4-byte words: the tile row rounded up to whole kWord, plus the padding (0..8 words) of
// least conflict cost.
template <int kE, int kTile, int kThreads, int kVB>
constexpr int PickPitchWords() {
  using S = SmallCta<kE, kTile, kThreads, kVB>;
  const int step = S::kWord / 4;
  const int base = (kTile * kE + 3) / 4;
  int best = base, best_cost = 1 << 30;
  for (int w = base; w <= base + 8; w += step) {
    const int c = ConflictCost<kE, kTile, kThreads, kVB>(w);
    if (c < best_cost) best = w, best_cost = c;
  }
  return best;
}

template <int kE, int kTile, int kThreads, int kVB, bool kSplit>
__global__ void __launch_bounds__(kThreads) TiledSmallCta(TiledArgs32 p) {
  using S = SmallCta<kE, kTile, kThreads, kVB>;
  using V = typename RawVec<kVB>::type;
  using T = std::conditional_t<kE == 1, uint8_t,
            std::conditional_t<kE == 2, uint16_t, std::conditional_t<kE == 4, uint32_t, uint64_t>>>;
  constexpr int kPitch = PickPitchWords<kE, kTile, kThreads, kVB>() * 4;  // bytes
  __shared__ __align__(16) unsigned char tile[kTile * kPitch];
  uint32_t a0, b0;
  const auto g = CompactTile<kSplit>(p, &a0, &b0, kTile);
  V v[S::kSteps];
#pragma unroll
  for (int i = 0; i < S::kSteps; ++i) {  // all loads first: kSteps requests in flight
    const int q = i * kThreads + threadIdx.x, r = q / S::kSlots, s = q % S::kSlots;
    const uint32_t b = b0 + r, a = a0 + s * S::kV;
    v[i] = V{};
    if (b < p.nb && a < p.na) {
      const uint32_t at = g.RowIn(b) + a;
      JK_DEVICE_ASSERT(at + S::kV <= g.elements());
      v[i] = __ldg(reinterpret_cast<const V*>(p.x + static_cast<size_t>(at) * kE));
    }
  }
#pragma unroll
  for (int i = 0; i < S::kSteps; ++i) {
    const int q = i * kThreads + threadIdx.x, r = q / S::kSlots, s = q % S::kSlots;
    if constexpr (S::kWord == 8) {
      const uint2* w = reinterpret_cast<const uint2*>(&v[i]);
#pragma unroll
      for (int k = 0; k < S::kWordsPerAccess; ++k)
        *reinterpret_cast<uint2*>(tile + r * kPitch + s * kVB + 8 * k) = w[k];
    } else {
      const uint32_t* w = reinterpret_cast<const uint32_t*>(&v[i]);
#pragma unroll
      for (int k = 0; k < S::kWordsPerAccess; ++k)
        *reinterpret_cast<uint32_t*>(tile + r * kPitch + s * kVB + 4 * k) = w[k];
    }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < S::kSteps; ++i) {
    const int q = i * kThreads + threadIdx.x, c = q / S::kSlots, s = q % S::kSlots;  // c: tile column
    const uint32_t a = a0 + c, b = b0 + s * S::kV;
    if (a >= p.na || b >= p.nb) continue;
    V o;
    if constexpr (kE >= 4) {
      T* e = reinterpret_cast<T*>(&o);
#pragma unroll
      for (int k = 0; k < S::kV; ++k) e[k] = *reinterpret_cast<const T*>(tile + (s * S::kV + k) * kPitch + c * kE);
    } else {  // pack kV 1- or 2-byte elements into words
      uint32_t* w = reinterpret_cast<uint32_t*>(&o);
      constexpr int kPer = 4 / kE;
#pragma unroll
      for (int j = 0; j < kVB / 4; ++j) {
        uint32_t word = 0;
#pragma unroll
        for (int k = 0; k < kPer; ++k) {
          const uint32_t e = *reinterpret_cast<const T*>(tile + (s * S::kV + j * kPer + k) * kPitch + c * kE);
          word |= e << (8 * kE * k);
        }
        w[j] = word;
      }
    }
    const uint32_t at = g.ColOut(a) + b;
    JK_DEVICE_ASSERT(at + S::kV <= g.elements());
    *reinterpret_cast<V*>(p.y + static_cast<size_t>(at) * kE) = o;
  }
}


// ---- kTiledNarrow: one side of the tile is a few elements (NHWC <-> NCHW with C = 3, ...) ---------------------
// The square tiles waste almost all of a tile when na or nb is tiny: (64, 224, 224, 3) float32 -> (0, 3, 1, 2) ran
// 362 us against jnp's 23 (64 x 64 tiles with 3 live rows). Here a CTA owns kTile consecutive indices of the long
// side and every index of the short one (at most kNarrowMax). Both phases walk the flattened (long, short) range so
// that consecutive threads touch consecutive elements of whichever array is dense along it: the load reads x's
// rows of `short` contiguous elements back to back (kNarrowA: A is short, x's rows are the tile's columns), the store
// writes y's rows of kTile contiguous elements; kNarrowA = false is the mirror image. 16-byte accesses where kVec
// allows them (below), element accesses otherwise; the tile is padded by one element per row against bank
// conflicts. Compact geometry (TiledArgs32: 32-bit offsets, one batch axis), any element size.
constexpr int kNarrowMax = 16;   // the short side, elements
constexpr int kNarrowTile = 256; // the long side per CTA
constexpr int kNarrowThreads = 256;

// kVec: 16-byte accesses on both sides (the launcher checks: no split group, the flattened side dense, every row
// start and both buffers 16-byte aligned); the dense range's and each row's last partial vector go element-wise.
template <typename T, bool kNarrowA, bool kSplit, bool kVec = false>
__global__ void __launch_bounds__(kNarrowThreads) TiledNarrow(TiledArgs32 p) {
  constexpr uint32_t V = 16 / sizeof(T);  // elements per 16-byte access
  __shared__ T tile[kNarrowMax][kNarrowTile + 1];  // [short index][long index]
  const uint32_t tiles = kNarrowA ? p.tiles_b : p.tiles_a;
  const uint32_t batch = blockIdx.x / tiles, t = blockIdx.x - batch * tiles;
  const Geometry32<kSplit> g{p, batch * p.batch_in, batch * p.batch_out};
  const uint32_t n_short = kNarrowA ? p.na : p.nb, n_long = kNarrowA ? p.nb : p.na;
  const uint32_t l0 = t * kNarrowTile;
  const uint32_t live = n_long - l0 < kNarrowTile ? n_long - l0 : kNarrowTile;
  const uint32_t count = live * n_short;
  const T* x = reinterpret_cast<const T*>(p.x);
  T* y = reinterpret_cast<T*>(p.y);
  // The flattened (long, short) range, dense in x (kNarrowA) or in y: element i is (l, s) = (i / n_short, i % n_short).
  // The rows: short index s, long indices l, dense in y (kNarrowA) or in x.
  const uint32_t nv = kVec ? count / V : 0;          // whole vectors of the flattened range
  const uint32_t rv = kVec ? live / V : 0;           // whole vectors of each row
  if constexpr (kNarrowA) {
    if constexpr (kVec) {
      const T* src = x + g.RowIn(l0);  // the CTA's flattened range, contiguous
      for (uint32_t v = threadIdx.x; v < nv; v += kNarrowThreads) {
        const uint4 w = reinterpret_cast<const uint4*>(src)[v];
        const T* e = reinterpret_cast<const T*>(&w);
#pragma unroll
        for (uint32_t k = 0; k < V; ++k) {
          const uint32_t i = v * V + k, l = i / n_short;
          tile[i - l * n_short][l] = e[k];
        }
      }
    }
    for (uint32_t i = nv * V + threadIdx.x; i < count; i += kNarrowThreads) {
      const uint32_t l = i / n_short, s = i - l * n_short;
      tile[s][l] = x[g.RowIn(l0 + l) + s];
    }
    __syncthreads();
    if constexpr (kVec) {
      for (uint32_t j = threadIdx.x; j < rv * n_short; j += kNarrowThreads) {
        const uint32_t s = j / rv, l = (j - s * rv) * V;
        uint4 w;
        T* e = reinterpret_cast<T*>(&w);
#pragma unroll
        for (uint32_t k = 0; k < V; ++k) e[k] = tile[s][l + k];
        *reinterpret_cast<uint4*>(y + g.ColOut(s) + l0 + l) = w;
      }
    }
    const uint32_t tail = live - rv * V;  // elements of each row after its whole vectors
    for (uint32_t j = threadIdx.x; j < tail * n_short; j += kNarrowThreads) {
      const uint32_t s = j / tail, l = rv * V + (j - s * tail);
      y[g.ColOut(s) + l0 + l] = tile[s][l];
    }
  } else {
    if constexpr (kVec) {
      for (uint32_t j = threadIdx.x; j < rv * n_short; j += kNarrowThreads) {
        const uint32_t s = j / rv, l = (j - s * rv) * V;
        const uint4 w = *reinterpret_cast<const uint4*>(x + g.RowIn(s) + l0 + l);
        const T* e = reinterpret_cast<const T*>(&w);
#pragma unroll
        for (uint32_t k = 0; k < V; ++k) tile[s][l + k] = e[k];
      }
    }
    const uint32_t tail = live - rv * V;
    for (uint32_t j = threadIdx.x; j < tail * n_short; j += kNarrowThreads) {
      const uint32_t s = j / tail, l = rv * V + (j - s * tail);
      tile[s][l] = x[g.RowIn(s) + l0 + l];
    }
    __syncthreads();
    if constexpr (kVec) {
      T* dst = y + g.ColOut(l0);  // the CTA's flattened range, contiguous
      for (uint32_t v = threadIdx.x; v < nv; v += kNarrowThreads) {
        uint4 w;
        T* e = reinterpret_cast<T*>(&w);
#pragma unroll
        for (uint32_t k = 0; k < V; ++k) {
          const uint32_t i = v * V + k, l = i / n_short;
          e[k] = tile[i - l * n_short][l];
        }
        reinterpret_cast<uint4*>(dst)[v] = w;
      }
    }
    for (uint32_t i = nv * V + threadIdx.x; i < count; i += kNarrowThreads) {
      const uint32_t l = i / n_short, s = i - l * n_short;
      y[g.ColOut(l0 + l) + s] = tile[s][l];
    }
  }
}

}  // namespace jk::transpose
