// Hopper TF32 matmul (sm_90a): float32 at precision DEFAULT/HIGH on wgmma, fed by TMA through the same kind
// of warp-specialised pipeline as the 16-bit tier (matmul_wgmma.cuh, whose helpers this reuses: its PTX wrappers
// are in matmul_wgmma_ptx.cuh).
//
// TF32 wgmma reads both shared-memory operands K-major only (no transpose bit for 32-bit types), and b
// (K, N) row-major is N-major. So the kernel computes C^T = b^T a^T: a's tile (BM rows x 32 k, K-major as
// TMA lays it down) is the wgmma's shared-memory B operand, and b's tile is the A operand, which wgmma can
// take from registers in any layout: each thread loads its fragment with ld.shared from b's N-major tile
// (and rounds it to TF32 with cvt.rna). The accumulators then hold C transposed; the epilogue writes them
// through shared memory into TMA stores of C, so b is never transposed in global memory. For linear
// it first applies bias, activation and residual to each accumulator (Tf32LinearEpilogue).
//
// CTA tile BM (M: 256, or 128 for problems with few tiles) x 128 (N) x 32 (K), 384 threads, three warpgroups:
//   warpgroup 0     producer: one thread issues each k-tile's TMA loads (a: one BM x 32 box; b: four 32 k x
//                   32 n panels) into a STAGES-deep ring, completion counted on "full" mbarriers. With
//                   kRoundA its warps 1-3 then round a's tile to TF32 in place ("rounded" mbarriers).
//   warpgroups 1-2  consumers: warpgroup w owns the tile's columns [64 w, 64 w + 64), i.e. 64 rows of
//                   C^T, one m64nBMk8 wgmma per 8 k (N = BM spans all the tile's rows of C).
// Persistent grid (one CTA per SM, tiles strided by gridDim.x), tiles in groups of 8 M-tiles for L2 reuse.
//
// Rounding: XLA's TF32 rounds both operands to nearest (cvt.rna); the tensor cores truncate what they read
// from shared memory. b's fragments go through cvt.rna in registers. a's are truncated by default: 1.6x
// XLA's error against float64 (H200, bench/lab/matmul_tf32_h200.md). kRoundA rounds a's tiles in shared
// memory with the producer warpgroup's idle warps (JK_MATMUL_TF32_ROUND=1; unmeasured, off by default).
//
// Register A fragment (as mma.m16n8k8 .tf32): register 0 is (row g, k t), 1 (g + 8, t), 2 (g, t + 4),
// 3 (g + 8, t + 4) of the warp's 16 rows (g = lane / 4, t = lane % 4). Rows of C^T are columns of C and
// free to permute: fragment row g is column 2g and row g + 8 column 2g + 1 of the warp's 16, so each thread
// reads 8-byte pairs (ld.shared.v2). In the b tile (128-byte rows of 32 n, 16-byte chunk c of k-row r at
// chunk c ^ (r % 8)) lanes t < 2 first read k = t and lanes t >= 2 k = t + 4: the warp's 4 k-rows then fall
// on both halves of the banks (2 wavefronts, the minimum for 256 bytes, instead of 4); a select puts each
// pair in its register.
//
// Requires (host side, matmul_wgmma_tf32.cu): float32, K and N multiples of 4 (16-byte TMA strides), a, b
// and out 16-byte aligned, batch strides of whole matrices. Tails along M, N and K are zero-filled by TMA;
// the TMA stores clip at the matrix edges.
#pragma once
#include "matmul/matmul_wgmma.cuh"

namespace jk::mm {

constexpr int kTf32BN = 128, kTf32BK = 32, kTf32Threads = 384;
constexpr int kTf32BPanel = kTf32BK * 32 * 4;              // 4 KiB: 32 k-rows x 32 n
constexpr int kTf32BStage = (kTf32BN / 32) * kTf32BPanel;  // 16 KiB
// Epilogue: per consumer warpgroup, two steps' worth (double buffered) of two 32 x 32 float32 boxes.
constexpr int kTf32OutBox = 32 * 32 * 4;
constexpr int kTf32EpiGroup = 2 * 2 * kTf32OutBox;
// Threads rounding a's tiles to TF32 (warps 1-3 of the producer warpgroup) where the kernel does so.
constexpr int kTf32Rounders = 96;

// BM (256 or 128) rows of C per tile: the wgmma's N. a's stage is BM rows of 128 bytes.
template <int BM, int STAGES>
struct Tf32Tile {
  static constexpr int kAStage = BM * kTf32BK * 4;
  static constexpr int kStageBytes = kAStage + kTf32BStage;
  // The ring (1 KiB aligned for the swizzle), the epilogue boxes, 3 mbarriers per stage, +1 KiB alignment.
  static constexpr int kSmemBytes = STAGES * kStageBytes + 2 * kTf32EpiGroup + 3 * STAGES * 8 + 1024;
  static_assert(BM == 128 || BM == 256, "one m64nBMk8 wgmma per 8 k");
  static_assert(kSmemBytes <= 227 * 1024, "fits the opt-in shared memory of an sm_90 CTA");
};

#ifdef JK_WGMMA_DEVICE

// D (64 x 256, float32, 128 registers a thread) += A (64 x 8, TF32 from registers) * B (8 x 256, TF32,
// K-major in shared memory with the 128-byte swizzle).
__device__ __forceinline__ void WgmmaTf32(float (&d)[128], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, {%128,%129,%130,%131}, %132, p, 1, 1;\n}\n"
      :
      "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
      "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
      "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
      "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
      "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
      "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
      "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
      "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
      "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
      "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
      "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
      "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
      "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
      "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
      "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

// The same with N = 128 (64 accumulator registers a thread).
__device__ __forceinline__ void WgmmaTf32(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, p, 1, 1;\n}\n"
      :
      "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
      "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
      "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
      "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
      "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
      "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
      "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

__device__ __forceinline__ uint2 LoadShared8(uint32_t addr) {
  uint2 v;
  asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n" : "=r"(v.x), "=r"(v.y) : "r"(addr));
  return v;
}
__device__ __forceinline__ void StoreShared8(uint32_t addr, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
}
__device__ __forceinline__ uint32_t RoundTf32(uint32_t bits) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(bits)));
  return r;
}
// Round-to-nearest (ties away from zero) of 4 float32s to TF32 in place in shared memory: adding half of
// TF32's unit in the last place to the magnitude bits carries into the kept bits exactly when cvt.rna
// would round up; the tensor cores then ignore the 13 low bits (they truncate).
__device__ __forceinline__ void RoundTf32Shared16(uint32_t addr) {
  uint32_t x, y, z, w;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n" : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(addr) : "memory");
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(x + 0x1000u), "r"(y + 0x1000u),
               "r"(z + 0x1000u), "r"(w + 0x1000u) : "memory");
}
// Keeps fragment registers live (unmodified) until this point: an in-flight wgmma still reads them.
__device__ __forceinline__ void HoldFragment(uint32_t (&f)[4][4]) {
#pragma unroll
  for (int s = 0; s < 4; ++s) asm volatile("" : "+r"(f[s][0]), "+r"(f[s][1]), "+r"(f[s][2]), "+r"(f[s][3])::"memory");
}

#endif  // JK_WGMMA_DEVICE

// Tile t of the flattened (batch, M-tile, N-tile) space, 8 consecutive M-tiles sweeping the N-tiles.
__device__ __forceinline__ WgmmaTileCoord Tf32TileOf(int64_t t, int64_t mtiles, int64_t ntiles, int bm) {
  constexpr int64_t kGroup = 8;
  const int64_t per_batch = mtiles * ntiles, z = t / per_batch, pid = t % per_batch;
  const int64_t per_group = kGroup * ntiles, first_m = (pid / per_group) * kGroup;
  const int64_t group_m = mtiles - first_m < kGroup ? mtiles - first_m : kGroup;
  return {z, (first_m + (pid % per_group) % group_m) * bm, ((pid % per_group) / group_m) * kTf32BN};
}

// kRoundA: warps 1-3 of the producer warpgroup (idle otherwise) round each landed a tile to TF32 in shared
// memory before the consumers read it ("rounded" mbarriers), so both operands are rounded to nearest as
// XLA's are; without it the tensor cores truncate a.
// linear's epilogue (bias, activation, residual) on the accumulators, before they go to the output boxes.
// The activation is fixed per kernel instantiation (kAct), the bias pair of the thread's two columns is
// loaded once per tile, a step's 16 residual values are loaded together before any is used, and no element
// branches: values outside C are computed on zeros and clipped by the TMA store. (The first form called
// Epilogue::Apply per element, whose run-time activation switch and bias/residual null checks put 1409
// branches into an 18.8k-instruction kernel: 754 us at 4096^3 +bias gelu +residual, 0.53x jnp's 401; this
// one: 7.9k instructions, 393 us, 1.02x; 2048^3: 57.9 against 140.3 us, jnp 66.8. H200,
// bench/lab/matmul_tf32_linear_h200.txt.)
template <Activation A>
struct Tf32LinearEpilogue {
  float b0 = 0.f, b1 = 0.f;
  const float* res = nullptr;  // the residual of the batch matrix, or null
  int64_t rrs = 0, rcs = 0;    // its row and column strides (0 where broadcast)
  int64_t row0 = 0, col0 = 0;  // C's row of the thread's tile row 2 tt, and its first column
  int64_t rows_left = 0, cols_left = 0;

  // ep: the batch matrix's epilogue operands; row: C's row of the thread's tile row 2 tt.
  __device__ __forceinline__ void Init(const Epilogue<float>& ep, int64_t row, int64_t out_col) {
    row0 = row;
    col0 = out_col;
    rows_left = ep.m - row0;
    cols_left = ep.n - out_col;
    if (ep.bias != nullptr) {
      b0 = cols_left > 0 ? ep.bias[out_col] : 0.f;
      b1 = cols_left > 1 ? ep.bias[out_col + 1] : 0.f;
    }
    res = ep.residual;
    rrs = ep.res_row_stride;
    rcs = ep.res_col_stride;
  }
  // v[qq][e][j]: C at row row0 + 32 h + 8 qq + e, column col0 + j.
  __device__ __forceinline__ void Apply(float (&v)[4][2][2], int h) const {
    float r[4][2][2];
#pragma unroll
    for (int qq = 0; qq < 4; ++qq)
#pragma unroll
      for (int e = 0; e < 2; ++e)
#pragma unroll
        for (int j = 0; j < 2; ++j) r[qq][e][j] = 0.f;
    if (res != nullptr) {
#pragma unroll
      for (int qq = 0; qq < 4; ++qq)
#pragma unroll
        for (int e = 0; e < 2; ++e)
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            const int64_t dr = 32 * h + 8 * qq + e;
            if (dr < rows_left && j < cols_left) r[qq][e][j] = res[(row0 + dr) * rrs + (col0 + j) * rcs];
          }
    }
#pragma unroll
    for (int qq = 0; qq < 4; ++qq)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        v[qq][e][0] = ActivateFor<float>(A, v[qq][e][0] + b0) + r[qq][e][0];
        v[qq][e][1] = ActivateFor<float>(A, v[qq][e][1] + b1) + r[qq][e][1];
      }
  }
};

// kAct >= 0: linear's epilogue (Tf32LinearEpilogue<Activation(kAct)>) on the accumulators; kAct < 0: the kernel
// stores a @ b as is.
template <int BM, int STAGES, bool kRoundA, int kAct = -1>
__global__ void __launch_bounds__(kTf32Threads, 1)
    WgmmaTf32Kernel(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
                    const __grid_constant__ CUtensorMap tma_out, const __grid_constant__ MatmulProblem p) {
#ifdef JK_WGMMA_DEVICE
  using C = Tf32Tile<BM, STAGES>;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  const uint32_t sa = (smem_base + 1023) & ~1023u;
  const uint32_t sb = sa + STAGES * C::kAStage, epi = sb + STAGES * kTf32BStage, bars = epi + 2 * kTf32EpiGroup;
  auto full = [&](int s) { return bars + 8 * s; };
  auto empty = [&](int s) { return bars + 8 * (STAGES + s); };
  auto rounded = [&](int s) { return bars + 8 * (2 * STAGES + s); };  // a's tile rounded (kRoundA)
  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      MbarInit(full(s), 1);
      MbarInit(empty(s), 256);  // every consumer thread arrives
      MbarInit(rounded(s), kTf32Rounders);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  const auto counts = [&p] {
    const int64_t mtiles = (p.m + BM - 1) / BM, ntiles = (p.n + kTf32BN - 1) / kTf32BN;
    return WgmmaCounts{mtiles, ntiles, mtiles * ntiles * p.batch_count,
                       static_cast<int>((p.k + kTf32BK - 1) / kTf32BK)};
  };

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if constexpr (kRoundA) {
      if (tid >= 32) {
        const auto [mtiles, ntiles, tiles, ktiles] = counts();
        int stage = 0;
        uint32_t phase = 0;
        for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
          for (int kt = 0; kt < ktiles; ++kt) {
            MbarWait(full(stage), phase);
            // 2048 16-byte pieces of a's tile, interleaved over the 96 threads (conflict-free).
#pragma unroll 4
            for (int j = tid - 32; j < C::kAStage / 16; j += kTf32Rounders)
              RoundTf32Shared16(sa + stage * C::kAStage + j * 16);
            FenceProxyAsync();  // the wgmmas (async proxy) read what these generic stores wrote
            MbarArrive(rounded(stage));
            if (++stage == STAGES) stage = 0, phase ^= 1;
          }
        }
        return;
      }
    }
    if (tid != 0) return;
    const auto [mtiles, ntiles, tiles, ktiles] = counts();
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tma_a)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tma_b)) : "memory");
    int stage = 0;
    uint32_t phase = 0;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
      const WgmmaTileCoord tc = Tf32TileOf(t, mtiles, ntiles, BM);
      const BatchOffsets o = OffsetsOf(p, tc.z);
      const int32_t za = static_cast<int32_t>(o.a / (p.m * p.k)), zb = static_cast<int32_t>(o.b / (p.k * p.n));
      for (int kt = 0; kt < ktiles; ++kt) {
        MbarWait(empty(stage), phase ^ 1);
        MbarExpectTx(full(stage), C::kStageBytes);
        const int32_t k0 = kt * kTf32BK;
        TmaLoad3d(sa + stage * C::kAStage, &tma_a, k0, static_cast<int32_t>(tc.m0), za, full(stage));
#pragma unroll
        for (int c = 0; c < kTf32BN / 32; ++c)
          TmaLoad3d(sb + stage * kTf32BStage + c * kTf32BPanel, &tma_b, static_cast<int32_t>(tc.n0) + 32 * c, k0, zb,
                    full(stage));
        if (++stage == STAGES) stage = 0, phase ^= 1;
      }
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int w = wg - 1;
  const WgmmaCounts cnt = counts();
  const int64_t mtiles = cnt.mtiles, ntiles = cnt.ntiles, tiles = cnt.tiles;
  const int ktiles = cnt.ktiles;
  if (tid == 0) asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tma_out)) : "memory");
  // This thread's fragment pairs in a b stage: columns 64 w + 16 warp + 2 g (+1), k-rows `kf` then `ks`
  // (t and t + 4, in the order that spreads the warp over the banks), in 4 KiB panels of 32 columns.
  const int lane = tid % 32, g = lane / 4, t = lane % 4;
  const bool low = t < 2;
  const int col = 64 * w + 16 * (tid / 32) + 2 * g, chunk = (col % 32) / 4;
  const int k_first = low ? t : t + 4, k_second = low ? t + 4 : t;
  const uint32_t frag0 = (col / 32) * kTf32BPanel + k_first * 128 + ((chunk ^ k_first) * 16) + (col % 4) * 4;
  const uint32_t frag1 = (col / 32) * kTf32BPanel + k_second * 128 + ((chunk ^ k_second) * 16) + (col % 4) * 4;

  float acc[BM / 2];
  uint32_t fa[4][4] = {}, fb[4][4] = {};
  int stage = 0;
  uint32_t phase = 0;
  // The k-tile in `stage`'s fragments (8 k per step, k-rows 8 s + ... : 1 KiB apart).
  auto load = [&](uint32_t (&f)[4][4]) {
    const uint32_t base = sb + stage * kTf32BStage;
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const uint2 v0 = LoadShared8(base + frag0 + s * 1024), v1 = LoadShared8(base + frag1 + s * 1024);
      f[s][0] = RoundTf32(low ? v0.x : v1.x);  // (column 2g, k t)
      f[s][1] = RoundTf32(low ? v0.y : v1.y);  // (column 2g + 1, k t)
      f[s][2] = RoundTf32(low ? v1.x : v0.x);  // (column 2g, k t + 4)
      f[s][3] = RoundTf32(low ? v1.y : v0.y);
    }
  };
  auto mma = [&](const uint32_t (&f)[4][4]) {
    WgmmaFence();
    const uint32_t a_base = sa + stage * C::kAStage;
#pragma unroll
    for (int s = 0; s < 4; ++s) WgmmaTf32(acc, f[s], SmemDesc(a_base + s * 32, 16, 1024));
    WgmmaCommit();
  };
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
#pragma unroll
    for (int r = 0; r < BM / 2; ++r) {
      acc[r] = 0.f;
      FenceOperand(acc[r]);
    }
    // Fragments alternate between fa and fb, so loading k-tile kt + 1's never overwrites registers that
    // k-tile kt's wgmmas (still in flight) read. k-tile kt's stage goes back to the producer once the
    // wgmmas of kt retired (WgmmaWait<1> after kt + 1's were issued).
    int prev = 0;
    // One k-tile: issue its wgmmas from `cur`, retire the previous k-tile's, free its stage, then load
    // the next k-tile's fragments into `nxt` (whose last reader just retired).
    auto step = [&](int kt, uint32_t (&cur)[4][4], uint32_t (&nxt)[4][4]) {
      mma(cur);
      WgmmaWait<1>();
      HoldFragment(nxt);
      if (kt > 0) MbarArrive(empty(prev));
      prev = stage;
      if (++stage == STAGES) stage = 0, phase ^= 1;
      if (kt + 1 < ktiles) {
        MbarWait(kRoundA ? rounded(stage) : full(stage), phase);
        load(nxt);
      }
    };
    if (ktiles > 0) {
      MbarWait(kRoundA ? rounded(stage) : full(stage), phase);
      load(fa);
    }
    for (int kt = 0; kt < ktiles; kt += 2) {
      step(kt, fa, fb);
      if (kt + 1 < ktiles) step(kt + 1, fb, fa);
    }
    WgmmaWait<0>();
    HoldFragment(fa);
    HoldFragment(fb);
#pragma unroll
    for (int r = 0; r < BM / 2; ++r) FenceOperand(acc[r]);
    if (ktiles > 0) MbarArrive(empty(prev));

    // Epilogue: BM / 32 steps of 32 rows of C (acc registers 4q .. 4q + 15 for q = 4h .. 4h + 3); register
    // 4q + e (e = 0, 1) is C[8q + 2t + e][column 2g], 4q + 2 + e the same row's column 2g + 1. Warps 0-1
    // fill the step's box of columns 0-31, warps 2-3 the box of 32-63; a box row is 128 bytes with the
    // 128-byte swizzle (chunk c of row r at c ^ (r % 8)).
    const WgmmaTileCoord tc = Tf32TileOf(tile, mtiles, ntiles, BM);
    uint32_t x;  // the thread index read afresh, so the box addresses are not held across the mainloop
    asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(x));
    const int warp = (x / 32) % 4, gg = (x % 32) / 4, tt = x % 4;
    const int box_chunk = 4 * (warp % 2) + gg / 2, box_sub = 8 * (gg % 2);
    const uint32_t my_epi = epi + w * kTf32EpiGroup;
    // linear: this thread's two columns of C (2 gg, 2 gg + 1 of the warp's 16) and the batch's operands.
    Tf32LinearEpilogue<static_cast<Activation>(kAct < 0 ? 0 : kAct)> linear_epi;
    if constexpr (kAct >= 0)
      linear_epi.Init(Epilogue<float>(p, tc.z, OffsetsOf(p, tc.z)), tc.m0 + 2 * tt, tc.n0 + 64 * w + 16 * warp + 2 * gg);
#pragma unroll
    for (int h = 0; h < BM / 32; ++h) {
      if constexpr (kAct >= 0) {  // the step's accumulators through the epilogue, in place
        float v[4][2][2];
#pragma unroll
        for (int qq = 0; qq < 4; ++qq)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            v[qq][e][0] = acc[4 * (4 * h + qq) + e];
            v[qq][e][1] = acc[4 * (4 * h + qq) + 2 + e];
          }
        linear_epi.Apply(v, h);
#pragma unroll
        for (int qq = 0; qq < 4; ++qq)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            acc[4 * (4 * h + qq) + e] = v[qq][e][0];
            acc[4 * (4 * h + qq) + 2 + e] = v[qq][e][1];
          }
      }
      const uint32_t boxes = my_epi + (h % 2) * (2 * kTf32OutBox);
      if (tid == 0) BulkWaitRead<1>();  // this buffer's stores of two steps ago have read it
      NamedBarrier(1 + w, 128);
      const uint32_t box = boxes + (warp / 2) * kTf32OutBox;
#pragma unroll
      for (int qq = 0; qq < 4; ++qq) {
        const int q = 4 * h + qq;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int r = 8 * qq + 2 * tt + e;
          StoreShared8(box + r * 128 + ((box_chunk ^ (r % 8)) * 16) + box_sub, acc[4 * q + e], acc[4 * q + 2 + e]);
        }
      }
      FenceProxyAsync();
      NamedBarrier(1 + w, 128);
      if (tid == 0) {
        const int32_t c0 = static_cast<int32_t>(tc.n0) + 64 * w, r0 = static_cast<int32_t>(tc.m0) + 32 * h;
        TmaStore3d(&tma_out, boxes, c0, r0, static_cast<int32_t>(tc.z));
        TmaStore3d(&tma_out, boxes + kTf32OutBox, c0 + 32, r0, static_cast<int32_t>(tc.z));
        BulkCommit();
      }
    }
  }
  if (tid == 0) BulkWaitAll();
#endif  // JK_WGMMA_DEVICE
}

}  // namespace jk::mm
