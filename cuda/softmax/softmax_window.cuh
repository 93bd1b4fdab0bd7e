// Softmax tier kWindowRows: unmasked rows whose length is not a whole number of 16-byte packs (n % kVec != 0: the
// GPT-2 vocabulary's 50257 columns, 4099...) over 16-byte-aligned x and y. Device code only; softmax_launch.cu picks
// it.
//
// Why: such rows start at every alignment in turn, so the vectorised tiers refuse them, and the same tiers with
// kVec = 1 moved 4-byte or 2-byte elements: 0.41-0.77x jnp from 4099 columns on (H200, bench/lab/
// s32_odd_softmax_lab_h200.txt). Here each row's window, the aligned 16-byte packs that overlap it
// (common/row_window.cuh), is read with 16-byte loads. Two forms:
//   WindowRowsRegsKernel (the default where the window fits: up to 1024 threads x 8 packs) holds the window in
//     registers, C packs a thread, and reads it once: the thread's max, then its sum of exp(x - max) over the
//     registers, one merge across the row's threads, then the outputs from the same registers. Why: read twice
//     (below), the window ran at 0.84-1.01x jnp from 1537 to 16381 columns but for float32 1537 (1.11x): bfloat16
//     0.84-0.96x, float32 0.87x at 16381 (H200, bench/lab/s32_odd_softmax_window_lab_h200.txt); the second read
//     came from L2 at best. Read once (H200, bench/lab/s33_softmax_window_lab_h200.txt): 1.00-1.26x jnp at every
//     case, float32 96-97% of the copy ceiling, 16-bit 72-95%; 1.12-1.37x the two-pass form; with 4 or 8 packs a
//     thread by the launcher's rule (call 9), 16-bit 1281-12291 columns 1.00-1.54x jnp, 73-98% of copy; with 4, 5, 6
//     or 8 (session 34) 16-bit 1537-12291 columns 1.14-1.45x, 81-98% of copy.
//   WindowRowsKernel: two passes, the running (max, sum) over the window merged across the row's threads, then the
//     outputs from a second read of the window (from L2 for rows in flight): rows whose window does not fit the
//     registers (float32 50257: 12565 packs), and the lab's baseline (JK_SOFTMAX_WINDOW_REGS=0).
// Elements outside the row take no part and are not written: whole packs are stored with 16-byte stores, the two
// edge packs element by element. Numerics as every tier (softmax_common.cuh), degenerate rows included.
#pragma once
#include "common/row_window.cuh"
#include "softmax/softmax_common.cuh"

namespace jk::softmax {

// A thread's place: kWarpRow, a warp per row (the CTA's warps take consecutive rows); else a CTA per row. `lanes`
// threads share a row, this one is `t` among them; its rows are first, first + step, ...
template <bool kWarpRow>
struct WindowThreads {
  int lanes = kWarpRow ? 32 : static_cast<int>(blockDim.x);
  int t = kWarpRow ? static_cast<int>(threadIdx.x % 32) : static_cast<int>(threadIdx.x);
  int64_t per_cta = kWarpRow ? blockDim.x / 32 : 1;
  int64_t first = static_cast<int64_t>(blockIdx.x) * per_cta + (kWarpRow ? threadIdx.x / 32 : 0);
  int64_t step = static_cast<int64_t>(gridDim.x) * per_cta;
};

// The row's (max, sum) merged across its threads: a warp's shuffles (warp rows) or the CTA's reduction.
template <bool kWarpRow>
__device__ __forceinline__ void MergeRowStats(float& m, float& s, float* sm, float* ss) {
  if constexpr (kWarpRow) {
#pragma unroll
    for (int k = 16; k > 0; k /= 2)
      MergeStats(m, s, __shfl_xor_sync(0xffffffffu, m, k), __shfl_xor_sync(0xffffffffu, s, k));
  } else {
    BlockAllReduceStats(m, s, sm, ss);
  }
}

// Window pack q's outputs from its float32 inputs f (a = log s or 1 / s): a whole pack with one 16-byte store, an edge
// pack (shared with a neighbouring row) element by element, its elements outside the row untouched.
template <typename T, int P>
__device__ __forceinline__ void StoreWindowPack(T* __restrict__ y, const RowWindow<P>& w, int q, float (&f)[P], float m,
                                                float a, bool degenerate, bool log) {
#pragma unroll
  for (int e = 0; e < P; ++e) f[e] = degenerate ? CUDART_NAN_F : log ? (f[e] - m) - a : ExpShifted(f[e], m) * a;
  if (w.Whole(q)) {
    StorePack<T, P>(y + (w.first + q) * P, f);
  } else {
#pragma unroll
    for (int e = 0; e < P; ++e)
      if (w.InRow(q, e)) y[w.start + w.Col(q, e)] = FromFloat<T>(f[e]);
  }
}

// The two-pass form. kWarpRow: a warp per row (CTAs of several warps, one row each); else a CTA per row.
template <typename T, bool kWarpRow>
__global__ void __launch_bounds__(kBlockRowsMaxThreads) WindowRowsKernel(const T* __restrict__ x, T* __restrict__ y,
                                                                         int64_t rows, int64_t n, bool log) {
  constexpr int P = 16 / static_cast<int>(sizeof(T));
  __shared__ float sm[32], ss[32];
  const WindowThreads<kWarpRow> g;
  const int lanes = g.lanes, t = g.t;
  const auto* xp = reinterpret_cast<const Pack<T, P>*>(x);
  // Element e of window pack q as float32, -inf outside the row.
  auto load = [&](const RowWindow<P>& w, int q, float* f) {
    const Pack<T, P> v = xp[w.first + q];
#pragma unroll
    for (int e = 0; e < P; ++e) f[e] = w.InRow(q, e) ? ToFloat(v.v[e]) : -CUDART_INF_F;
  };
  // The loop bound is uniform per warp (warp rows) or per CTA (CTA rows): the reductions are collective.
  for (int64_t row = g.first; row < rows; row += g.step) {
    const RowWindow<P> w(row, n);
    float m = -CUDART_INF_F, s = 0.f;
#pragma unroll 2
    for (int q = t; q < w.packs; q += lanes) {
      float f[P];
      load(w, q, f);
      float pm = f[0];
#pragma unroll
      for (int e = 1; e < P; ++e) pm = fmaxf(pm, f[e]);  // like fmaxf everywhere, skips a NaN: it poisons s below
      if (pm > m) {
        s *= ExpShifted(m, pm);
        m = pm;
      }
#pragma unroll
      for (int e = 0; e < P; ++e)
        if (!(f[e] == -CUDART_INF_F)) s += ExpShifted(f[e], m);  // -inf (masked-like, or outside the row) adds 0
    }
    MergeRowStats<kWarpRow>(m, s, sm, ss);
    const bool degenerate = Degenerate(m, s);
    const float a = log ? logf(s) : 1.f / s;
#pragma unroll 2
    for (int q = t; q < w.packs; q += lanes) {
      float f[P];
      load(w, q, f);
      StoreWindowPack<T, P>(y, w, q, f, m, a, degenerate, log);
    }
  }
}

// Widest CTA of the register-held form: 8 packs a thread hold windows of up to 8192 packs (bfloat16 50257: 6284).
// Its bound caps the CTA kernels at 64 registers.
constexpr int kWindowRegsMaxThreads = 1024;

// A pack of -inf (the window's packs past its end, and the edge packs' elements outside the row, read as -inf).
template <typename T, int P>
__device__ __forceinline__ Pack<T, P> NegInfPack() {
  uint32_t w;
  if constexpr (sizeof(T) == 4) w = 0xFF800000u;
  else w = uint32_t(Pair<T>::kNegInf) * 0x10001u;
  const uint4 u = make_uint4(w, w, w, w);
  Pack<T, P> p;
  memcpy(&p, &u, 16);
  return p;
}

// Elements [lo, hi) of a pack kept, the others set to -inf, on its 32-bit words (16-bit elements set one at a time
// took ptxas's 16-bit C = 8 kernels from 54 to 64+ registers with spills).
template <typename T, int P>
__device__ __forceinline__ void KeepOnly(Pack<T, P>& v, int lo, int hi) {
  uint32_t u[4], neg[4];
  memcpy(u, &v, 16);
  const Pack<T, P> ni = NegInfPack<T, P>();
  memcpy(neg, &ni, 16);
  constexpr int E = P / 4;  // elements a word
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    uint32_t keep = 0;
#pragma unroll
    for (int h = 0; h < E; ++h) {
      const int e = j * E + h;
      if (e >= lo && e < hi) keep |= (E == 1 ? 0xFFFFFFFFu : 0xFFFFu << (16 * h));
    }
    u[j] = (u[j] & keep) | (neg[j] & ~keep);
  }
  memcpy(&v, u, 16);
}

// The float32 values of a pack (16-bit: a 32-bit word at a time, Unpack2).
template <typename T, int P>
__device__ __forceinline__ void PackFloats(const Pack<T, P>& v, float (&f)[P]) {
  if constexpr (sizeof(T) == 2) {
    uint32_t w[P / 2];
    memcpy(w, &v, 16);
#pragma unroll
    for (int j = 0; j < P / 2; ++j) {
      const float2 h = Unpack2<T>(w[j]);
      f[2 * j] = h.x;
      f[2 * j + 1] = h.y;
    }
  } else {
#pragma unroll
    for (int e = 0; e < P; ++e) f[e] = ToFloat(v.v[e]);
  }
}

// The register-held form, C packs a thread. kWarpRow: a warp per row (CTAs of kWarpRowsBlock threads, a row a warp,
// windows of up to 32 C packs); else a CTA per row, blockDim.x * C >= the window's packs (the launcher's rule).
// Pack k of a thread is window pack k * lanes + t, as in the two-pass kernel's loop: consecutive threads read
// consecutive packs.
template <typename T, int C, bool kWarpRow>
__global__ void __launch_bounds__(kWarpRow ? kWarpRowsBlock : kWindowRegsMaxThreads)
    WindowRowsRegsKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n, bool log) {
  constexpr int P = 16 / static_cast<int>(sizeof(T));
  __shared__ float sm[32], ss[32];
  const WindowThreads<kWarpRow> g;
  const int lanes = g.lanes, t = g.t;
  const auto* xp = reinterpret_cast<const Pack<T, P>*>(x);
  // The loop bound is uniform per warp (warp rows) or per CTA (CTA rows): the reductions are collective.
  for (int64_t row = g.first; row < rows; row += g.step) {
    const RowWindow<P> w(row, n);
    // Every thread loads its C packs unconditionally, a pack past the window's end as the window's last pack again
    // (an L1 hit), so that the loads issue back to back; then the packs not wholly in the row (the two edge packs
    // and those past the end) keep only their elements in the row, the others -inf: no per-element test in the
    // passes below.
    const Pack<T, P>* xr = xp + w.first;
    Pack<T, P> v[C];
#pragma unroll
    for (int k = 0; k < C; ++k) v[k] = xr[min(k * lanes + t, w.packs - 1)];
#pragma unroll
    for (int k = 0; k < C; ++k) {
      const int q = k * lanes + t;
      // Window pack 0 is a thread's pack 0 (k = 0, t = 0): for k > 0 only the row's end can fall inside the pack.
      if (!w.Whole(q)) KeepOnly(v[k], k == 0 ? w.head - q * P : 0, w.head + w.n - q * P);
    }
    // bfloat16 packs stay packed between the passes (Opaque, as norm_window.cuh): otherwise the compiler keeps the
    // sum pass's float32 conversions live to the output pass, two registers a pair (ptxas: 64 registers and 80 bytes
    // of spills at 8 packs a thread, 48-63 at 2-4 against 40-48; float16 the same with or without).
    auto pin = [&] {
      if constexpr (std::is_same_v<T, __nv_bfloat16>) {
#pragma unroll
        for (int k = 0; k < C; ++k) Opaque(v[k]);
      }
    };
    // The thread's max: 16-bit on the packed pairs (__hmax2: exact, and like fmaxf it skips a NaN, which then
    // poisons the sum), float32 by fmaxf.
    float m;
    if constexpr (sizeof(T) == 2) {
      using T2 = typename Pair<T>::type;
      T2 pm;
      memcpy(&pm, &v[0], 4);
#pragma unroll
      for (int k = 0; k < C; ++k) {
        T2 h[P / 2];
        memcpy(h, &v[k], 16);
#pragma unroll
        for (int j = 0; j < P / 2; ++j) pm = __hmax2(pm, h[j]);
      }
      uint32_t pw;
      memcpy(&pw, &pm, 4);
      const float2 f = Unpack2<T>(pw);
      m = fmaxf(f.x, f.y);
    } else {
      m = -CUDART_INF_F;
#pragma unroll
      for (int k = 0; k < C; ++k)
#pragma unroll
        for (int e = 0; e < P; ++e) m = fmaxf(m, v[k].v[e]);
    }
    // The thread's sum of exp(x - m): -inf entries add exp2(-inf) = 0 (as the two-pass kernel's skip, bit for bit),
    // a thread of -inf entries only (m = -inf) shifts by 0 instead, adding 0 (or NaN for a NaN: it poisons s).
    pin();
    float s = 0.f;
    {
      const float shift = m == -CUDART_INF_F ? 0.f : m;
#pragma unroll
      for (int k = 0; k < C; ++k) {
        float f[P];
        PackFloats<T, P>(v[k], f);
#pragma unroll
        for (int e = 0; e < P; ++e) s += ExpShifted(f[e], shift);
      }
    }
    MergeRowStats<kWarpRow>(m, s, sm, ss);
    const bool degenerate = Degenerate(m, s);
    const float a = log ? logf(s) : 1.f / s;
    pin();
#pragma unroll
    for (int k = 0; k < C; ++k) {
      const int q = k * lanes + t;
      if (q >= w.packs) continue;
      float f[P];
      PackFloats<T, P>(v[k], f);
      StoreWindowPack<T, P>(y, w, q, f, m, a, degenerate, log);
    }
  }
}

}  // namespace jk::softmax
