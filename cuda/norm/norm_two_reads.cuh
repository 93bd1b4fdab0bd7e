// LayerNorm / RMSNorm kernels that read x twice: tier 3 (a CTA per row, any length or alignment:
// BlockPerRowTwoReads), tier 4 (a non-last axis: StridedTwoReads), and ApplyStats (given statistics, the
// sharded-axis entry point). Device code only; the launcher is norm_launch.cu. Shared parts: norm_kernels.cuh.
#pragma once
#include "norm/norm_kernels.cuh"

namespace jk::norm {

// ---- tier 3: a block per row reading x twice (any length, any alignment) --------------------------
// Pass 1 loads kTwoReadsUnroll packs per thread at once (more bytes in flight per thread), reduces them
// exactly in registers (two passes over at most U * P values) and merges that chunk into the thread's
// Welford state (one division per chunk); pass 2 re-reads the row, which the first pass just brought
// into L2, with an evict-first load (its last use) and writes y with streaming stores, so y does not push
// other rows' x out of L2 before their second read. With stats_only the kernel writes (mean, M2) for
// LayerNorm or the mean of squares for RMSNorm instead of y (the sharded-axis entry points).
// Packs per thread per step, and the CTAs per SM the register budget must allow: 4 float32 packs (64
// bytes in flight per thread) at 2 CTAs of 512 threads; one bf16/f16 pack at 3 CTAs (4 half packs, 32
// values, took 119 registers: one CTA per SM).
template <typename T>
constexpr int kTwoReadsUnroll = sizeof(T) == 4 ? 4 : 1;
template <typename T>
constexpr int kTwoReadsMinBlocks = sizeof(T) == 4 ? 2 : 3;
constexpr int kTwoReadsMaxThreads = 512;

template <typename T, int P>
__device__ __forceinline__ void StorePackStreaming(T* p, const Pack<T, P>& v) {
  if constexpr (sizeof(Pack<T, P>) == 16) {
    __stcs(reinterpret_cast<int4*>(p), *reinterpret_cast<const int4*>(&v));
  } else {
    StorePack<T, P>(p, v);
  }
}

// Welford state of the first `valid` of U register packs, shifted by `shift`, given their shifted sum `s`:
// the mean first, then the squared deviations from it (two exact passes over registers), ready to merge.
template <typename T, int P, int U>
__device__ __forceinline__ Welford PacksWelford(const Pack<T, P> (&v)[U], int valid, float shift, float s) {
  Welford cw;
  cw.count = static_cast<float>(valid * P);
  cw.mean = s / cw.count;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (u < valid) {
#pragma unroll
      for (int e = 0; e < P; ++e) {
        const float d = (ToFloat(v[u].v[e]) - shift) - cw.mean;
        cw.m2 += d * d;
      }
    }
  }
  return cw;
}

template <typename T, Kind K, int P>
__global__ void __launch_bounds__(kTwoReadsMaxThreads, kTwoReadsMinBlocks<T>) BlockPerRowTwoReads(Params<T> p, bool stats_only) {
  constexpr int U = kTwoReadsUnroll<T>;
  __shared__ float scratch[3 * 32];
  const int64_t rows = p.outer, n = p.n;
  const int64_t packs = n / P;  // the launcher guarantees n % P == 0
  const int64_t step = blockDim.x;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x = p.x + row * n;
    const float shift = RowShift<K>(p.x, row, rows, n);
    Welford w;  // of x - shift (LayerNorm)
    for (int64_t base = threadIdx.x; base < packs; base += U * step) {
      Pack<T, P> v[U];
      int valid = 0;  // packs base, base + step, ... that exist: a prefix of v, at least one
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (base + u * step < packs) {
          v[u] = LoadPack<T, P>(x + (base + u * step) * P);
          ++valid;
        }
      }
      float s = 0.f;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (u < valid) {
#pragma unroll
          for (int e = 0; e < P; ++e) s += ToFloat(v[u].v[e]) - shift;
        }
      }
      w.Merge(PacksWelford(v, valid, shift, s));
    }
    // The butterfly for LayerNorm, the serial merge for RMSNorm: measured on an H200 (session 11 benchmark,
    // two runs, % of copy) LayerNorm float32 16384 95.6 -> 98.1, RMSNorm float32 32768 81.3 -> 75.3-75.6 with
    // the butterfly (not analysed: the reduction is shorter, the second read's L2 hits may not be).
    w = BlockAllReduceWelford<K == Kind::kLayerNorm>(w, scratch);
    const float var = w.m2 / static_cast<float>(n);
    // mean(x^2) = var + mean^2: two non-negative terms, no cancellation.
    const float ms = var + w.mean * w.mean;  // RMSNorm: shift == 0
    const float mean = K == Kind::kLayerNorm ? shift + w.mean : 0.f;
    const float rstd = RstdFrom(K == Kind::kLayerNorm ? var : ms, p.epsilon);
    if (stats_only) {
      if (threadIdx.x == 0) {
        p.mean[row] = K == Kind::kLayerNorm ? mean : ms;
        if (K == Kind::kLayerNorm) p.rstd[row] = w.m2;
      }
      __syncthreads();  // scratch is reused by the next row's reduction
      continue;
    }
    const T* scale = ScaleRow(p, row);
    const T* bias = BiasRow(p, row);
    T* y = p.y + row * n;
    for (int64_t base = threadIdx.x; base < packs; base += U * step) {
      Pack<T, P> v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (base + u * step < packs) v[u] = LoadPackStreaming<T, P>(x + (base + u * step) * P);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t i = base + u * step;
        if (i < packs) StorePackStreaming<T, P>(y + i * P, NormalizePack<K, T, P>(v[u], mean, rstd, scale, bias, i * P));
      }
    }
    if (threadIdx.x == 0 && p.mean != nullptr) {
      p.mean[row] = mean;
      p.rstd[row] = rstd;
    }
    __syncthreads();
  }
}

// ---- tier 4: normalising a non-last axis (inner > 1) ----------------------------------------------
// Columns are the outer * inner (o, i) pairs, flattened so that a warp's 32 lanes take 32 consecutive
// columns: consecutive addresses within an outer index, whole 32-byte sectors across outer indices even
// when inner is small (measured: one outer index per block left half the lanes idle at inner = 16). The
// blockDim.y slices split the n strided elements of each column (the launcher uses up to 32 slices, so
// short grids of long columns still fill the GPU); each thread merges chunks of 8 elements (exact
// two-pass in registers, one division per chunk), the slices merge through shared memory, and x is read
// again to write y.
constexpr int kStridedMaxSlices = 32;

template <typename T, Kind K>
__global__ void __launch_bounds__(32 * kStridedMaxSlices) StridedTwoReads(Params<T> p, bool stats_only) {
  __shared__ float sm[3][kStridedMaxSlices][33];
  const int64_t n = p.n, inner = p.inner, columns = p.outer * p.inner;
  const int64_t tiles = (columns + 31) / 32;
  const int tx = threadIdx.x, ty = threadIdx.y, slices = blockDim.y;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t c = t * 32 + tx;
    const bool live = c < columns;
    const int64_t o = live ? c / inner : 0, i = live ? c % inner : 0;
    const T* x = p.x + o * n * inner + i;
    const float shift = K == Kind::kLayerNorm && live ? ToFloat(x[0]) : 0.f;  // see RowShift
    Welford w;  // of x - shift
    for (int64_t j0 = static_cast<int64_t>(ty) * 8; j0 < n; j0 += 8 * slices) {
      float v[8];
      int cnt = 0;
      float s = 0.f;
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const bool ok = live && j0 + e < n;
        v[e] = ok ? ToFloat(x[(j0 + e) * inner]) - shift : 0.f;
        s += v[e];
        cnt += ok;
      }
      if (cnt == 0) continue;
      Welford cw;
      cw.count = static_cast<float>(cnt);
      cw.mean = s / cw.count;
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const float d = v[e] - cw.mean;
        cw.m2 += e < cnt ? d * d : 0.f;
      }
      w.Merge(cw);
    }
    sm[0][ty][tx] = w.count;
    sm[1][ty][tx] = w.mean;
    sm[2][ty][tx] = w.m2;
    __syncthreads();
    Welford r;
    for (int s = 0; s < slices; ++s) {
      Welford o2;
      o2.count = sm[0][s][tx];
      o2.mean = sm[1][s][tx];
      o2.m2 = sm[2][s][tx];
      r.Merge(o2);
    }
    __syncthreads();  // sm is rewritten by the next tile
    const float var = r.m2 / static_cast<float>(n);
    const float ms = var + r.mean * r.mean;  // RMSNorm: shift == 0
    const float mean = K == Kind::kLayerNorm ? shift + r.mean : 0.f;
    const float rstd = RstdFrom(K == Kind::kLayerNorm ? var : ms, p.epsilon);
    if (stats_only) {
      if (live && ty == 0) {
        p.mean[c] = K == Kind::kLayerNorm ? mean : ms;
        if (K == Kind::kLayerNorm) p.rstd[c] = r.m2;
      }
      continue;
    }
    if (!live) continue;
    if (ty == 0 && p.mean != nullptr) {
      p.mean[c] = mean;
      p.rstd[c] = rstd;
    }
    const T* scale = ScaleRow(p, o);
    const T* bias = BiasRow(p, o);
    T* y = p.y + o * n * inner + i;
    for (int64_t j = ty; j < n; j += slices) {
      y[j * inner] = FromFloat<T>(Normalize<K>(ToFloat(x[j * inner]), mean, rstd, scale, bias, j));
    }
  }
}

// ---- apply given statistics (the sharded-axis entry point) ----------------------------------------
// Elementwise: y = (x - mean) * rstd * scale + bias with per-(outer, inner) mean/rstd. mean is null for
// RMSNorm.
template <typename T, Kind K>
__global__ void __launch_bounds__(256) ApplyStats(Params<T> p) {
  const int64_t total = p.outer * p.n * p.inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t i = e % p.inner, j = (e / p.inner) % p.n, o = e / (p.inner * p.n);
    const int64_t stat = o * p.inner + i;
    const float mean = K == Kind::kLayerNorm ? p.mean[stat] : 0.f;
    p.y[e] = FromFloat<T>(Normalize<K>(ToFloat(p.x[e]), mean, p.rstd[stat], ScaleRow(p, o), BiasRow(p, o), j));
  }
}

}  // namespace jk::norm
