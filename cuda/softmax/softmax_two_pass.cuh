// Softmax / log-softmax tiers 3 and 4: a CTA per row reading x twice, and the columns kernel (any axis, any row
// length; also the statistics-only and apply entries). Numerics: softmax_common.cuh.
#pragma once
#include "softmax/softmax_common.cuh"

namespace jk::softmax {

// ---- tier 3: a block per row, two reads --------------------------------------------------------------
// Rows longer than a CTA holds: pass 1 keeps a per-thread online (max, sum) over 16-byte packs, the
// block merges the pairs; pass 2 re-reads the row (from L2 when the rows in flight fit there) and writes.
// The re-read is the row's last use, hence the evict-first (streaming) load.

template <typename T, int kVec>
__device__ __forceinline__ void LoadPackLastUse(const T* p, float* v) {
  if constexpr (sizeof(T) * kVec == 16) {
    const uint4 raw = __ldcs(reinterpret_cast<const uint4*>(p));
    Pack<T, kVec> pk;
    memcpy(&pk, &raw, 16);
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = ToFloat(pk.v[k]);
  } else {
    LoadPack<T, kVec>(p, v);
  }
}

// This thread's online (max, sum) over packs first, first + stride, ... of a row (kVec elements each),
// kUnroll packs loaded before any is used; masked entries read as -inf and are skipped. The two-pass
// kernel's first pass and the statistics-only kernels (softmax_stats_apply.cuh).
template <typename T, int kVec, int kUnroll, bool kMask>
__device__ __forceinline__ void AccumulateRow(const T* xr, const MaskIndex& mask, int64_t moff, int64_t n,
                                              int64_t first, int64_t stride, float& m, float& s) {
  constexpr int U = kUnroll;
  m = -CUDART_INF_F;
  s = 0.f;
  for (int64_t base = first * kVec; base < n; base += U * stride * kVec) {
    float v[U][kVec];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t col = base + u * stride * kVec;
      if (col < n) {
        LoadPack<T, kVec>(xr + col, v[u]);
        if constexpr (kMask) ApplyMask<kVec>(mask, moff, col, v[u]);
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[u][k] = -CUDART_INF_F;
      }
    }
    float pm = -CUDART_INF_F;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int k = 0; k < kVec; ++k) pm = fmaxf(pm, v[u][k]);
    float ps = 0.f;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int k = 0; k < kVec; ++k) ps += v[u][k] == -CUDART_INF_F ? 0.f : ExpShifted(v[u][k], pm);
    MergeStats(m, s, pm, ps);
  }
}

template <typename T, int kVec, bool kMask>
__global__ void __launch_bounds__(kTwoPassBlock)
    TwoPassRowsKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n, MaskIndex mask,
                      bool log) {
  constexpr int kUnroll = 4;  // packs loaded before any is used: 4 independent 16-byte loads in flight
  __shared__ float sm[32], ss[32];
  const int64_t step = int64_t(blockDim.x) * kVec;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t moff = kMask ? mask.outer.Offset(row) : 0;
    const T* xr = x + row * n;
    float m, s;
    AccumulateRow<T, kVec, kUnroll, kMask>(xr, mask, moff, n, threadIdx.x, blockDim.x, m, s);
    BlockAllReduceStats(m, s, sm, ss);
    T* yr = y + row * n;
    if (Degenerate(m, s)) {  // own loop: see BlockRowsKernel
      for (int64_t col = int64_t(threadIdx.x) * kVec; col < n; col += step)
        StoreDegenerate<T, kVec, kMask>(yr + col, mask, moff, col, log);
      continue;
    }
    const float a = log ? logf(s) : 1.f / s;
    for (int64_t base = int64_t(threadIdx.x) * kVec; base < n; base += kUnroll * step) {
      float v[kUnroll][kVec];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t col = base + u * step;
        if (col < n) LoadPackLastUse<T, kVec>(xr + col, v[u]);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t col = base + u * step;
        if (col >= n) continue;
        if constexpr (kMask) ApplyMask<kVec>(mask, moff, col, v[u]);
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const float t = v[u][k] - m;
          v[u][k] = log ? t - a : Exp2(t * kLog2e) * a;
        }
        StorePack<T, kVec>(yr + col, v[u]);
      }
    }
  }
}

// ---- tier 4: columns (any axis, any row length; also the statistics-only and apply entries) --------
// blockDim = (bx, by), bx * by = kColumnsBlock: bx consecutive positions of the inner (contiguous) dims,
// by threads splitting the axis. Pass 1 runs the online max/sum; the by partials merge in shared memory
// (tree); pass 2 re-reads x (mostly from L2) and writes. Coalesced for inner >= 32 and for inner == 1
// (bx = 1: the axis itself is contiguous); a strided kernel, not transposes around a last-axis kernel.
enum class ColumnsMode { kSoftmax, kStats, kApply };

template <typename T, bool kMask, ColumnsMode kMode>
__global__ void __launch_bounds__(kColumnsBlock)
    ColumnsKernel(const T* __restrict__ x, T* __restrict__ y, float* __restrict__ max_out,
                  float* __restrict__ sum_out, const float* __restrict__ max_in, const float* __restrict__ sum_in,
                  int64_t outer, int64_t n, int64_t inner, MaskIndex mask, bool log) {
  __shared__ float sm[kColumnsBlock], ss[kColumnsBlock];
  const int bx = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
  const int64_t tiles_per_outer = (inner + bx - 1) / bx;
  const int64_t tiles = outer * tiles_per_outer;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t o = tile / tiles_per_outer;
    const int64_t i = (tile - o * tiles_per_outer) * bx + tx;
    const bool valid = i < inner;
    const T* xc = x + o * n * inner + i;  // element j at xc[j * inner]
    const int64_t moff = (kMask && valid) ? mask.outer.Offset(o) + mask.inner.Offset(i) : 0;
    float m = -CUDART_INF_F, s = 0.f;
    if constexpr (kMode == ColumnsMode::kApply) {
      if (valid) {
        m = max_in[o * inner + i];
        s = sum_in[o * inner + i];
      }
    } else {
      if (valid) {
        for (int64_t j = ty; j < n; j += by) {
          float v = ToFloat(xc[j * inner]);
          if constexpr (kMask) v = mask.data[moff + j * mask.axis_stride] ? v : -CUDART_INF_F;
          OnlineAdd(m, s, v);
        }
      }
      sm[ty * bx + tx] = m;
      ss[ty * bx + tx] = s;
      __syncthreads();
      for (int half = by / 2; half > 0; half /= 2) {
        if (ty < half) {
          float a = sm[ty * bx + tx], b = ss[ty * bx + tx];
          MergeStats(a, b, sm[(ty + half) * bx + tx], ss[(ty + half) * bx + tx]);
          sm[ty * bx + tx] = a;
          ss[ty * bx + tx] = b;
        }
        __syncthreads();
      }
      m = sm[tx];
      s = ss[tx];
      __syncthreads();  // sm/ss are rewritten by the next tile
      if constexpr (kMode == ColumnsMode::kStats) {
        if (ty == 0 && valid) {
          max_out[o * inner + i] = m;
          sum_out[o * inner + i] = s;
        }
        continue;
      }
    }
    if constexpr (kMode != ColumnsMode::kStats) {
      if (!valid) continue;
      T* yc = y + o * n * inner + i;
      const bool degenerate = Degenerate(m, s);
      const float a = log ? logf(s) : 1.f / s;
      for (int64_t j = ty; j < n; j += by) {
        const bool live = !kMask || mask.data[moff + j * mask.axis_stride] != 0;
        float out;
        if (!live) {
          out = MaskedValue(log);
        } else if (degenerate) {
          out = CUDART_NAN_F;
        } else {
          const float t = ToFloat(xc[j * inner]) - m;
          out = log ? t - a : Exp2(t * kLog2e) * a;
        }
        yc[j * inner] = FromFloat<T>(out);
      }
    }
  }
}

}  // namespace jk::softmax
