// Tensor-core matmul with mma.sync (sm_80+): bf16/f16 via m16n8k16, float32 at DEFAULT/HIGH precision via
// TF32 m16n8k8 (inputs rounded to TF32 with cvt.rna, as XLA's default float32 dot does on GPUs).
//
// Block tile BM x BN x (64 bytes of k), WARPS_M x WARPS_N warps each owning a (BM/WARPS_M) x (BN/WARPS_N)
// accumulator tile in registers. Tiles stream through a STAGES-deep cp.async ring in shared memory
// (16-byte copies, zero-filled past the matrix edges), so the loads of tile k+STAGES-1 overlap the math
// of tile k. Shared rows are padded by 16 bytes (32 for TF32's b) so ldmatrix / scalar fragment reads hit
// 8 distinct bank groups without a swizzle. Blocks are rasterised in groups of 8 M-tiles so neighbouring
// blocks share panels of a and b in L2.
// Requires K and N multiples of 16 bytes' worth of elements and 16-byte aligned a and b, except with
// STAGED: then an operand whose rows are not 16-byte aligned (odd N, K % 8 != 0, a sliced base; 16-bit
// types only) is read through registers: two aligned 16-byte loads per 8 elements, shifted into place
// and stored to the same shared layout after the math of the current tile (one tile of lookahead).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "common/device.cuh"
#include "matmul/matmul_epilogue.cuh"

namespace jk::mm {

__device__ __forceinline__ uint32_t SmemAddr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global -> shared copy; copies nothing and zero-fills when !valid.
__device__ __forceinline__ void CpAsync16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void CpAsyncWait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void LdMatrixX4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void LdMatrixX4Trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// One aligned 16-byte block of an operand whose buffer is [lo, hi) (bytes). A block holding the buffer's
// first or last element may also hold bytes outside it: those cannot fault (a 16-byte block never crosses
// a page) but may never have been written (compute-sanitizer's initcheck reports them), so such a block is
// read element by element, zero outside the buffer. Only a buffer's two end blocks take that path.
__device__ __forceinline__ uint4 LoadBlock16(const uint4* blk, uintptr_t lo, uintptr_t hi) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(blk);
  if (b >= lo && b + 16 <= hi) return __ldg(blk);
  uint32_t w[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const uintptr_t e = b + 4 * q;
    const uint32_t l = e >= lo && e + 2 <= hi ? __ldg(reinterpret_cast<const unsigned short*>(e)) : 0u;
    const uint32_t h = e + 2 >= lo && e + 4 <= hi ? __ldg(reinterpret_cast<const unsigned short*>(e + 2)) : 0u;
    w[q] = l | (h << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// 8 consecutive 16-bit elements from a 2-byte aligned address, in two steps so the loads can be issued a
// tile ahead of their use. Issue: the (at most two) aligned 16-byte blocks that hold them, only those
// holding one of the first `valid` elements, so nothing past the operand's last element is touched (an
// aligned block holding a valid element cannot fault); `info` keeps the byte shift and the valid count.
// [lo, hi): the operand's buffer (LoadBlock16).
__device__ __forceinline__ void IssueRow8(const void* p, int64_t valid, uint4 (&raw)[2], int& info,
                                          const void* lo, const void* hi) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  const uintptr_t blo = reinterpret_cast<uintptr_t>(lo), bhi = reinterpret_cast<uintptr_t>(hi);
  const uint4* blk = reinterpret_cast<const uint4*>(addr & ~uintptr_t{15});
  const int sh = static_cast<int>(addr & 15);
  const int v = valid < 0 ? 0 : valid > 8 ? 8 : static_cast<int>(valid);
  raw[0] = raw[1] = make_uint4(0, 0, 0, 0);
  if (v > 0) raw[0] = LoadBlock16(blk, blo, bhi);
  if (v > (16 - sh) / 2) raw[1] = LoadBlock16(blk + 1, blo, bhi);
  info = sh | (v << 4);
}
// Finish: the 8 elements as 4 packed words (the 32-byte window shifted down by the byte offset), elements
// from the valid count on set to zero (a tail k must add nothing).
__device__ __forceinline__ uint4 AlignRow8(const uint4 (&raw)[2], int info) {
  const int sh = info & 15, v = info >> 4;
  uint32_t w[8] = {raw[0].x, raw[0].y, raw[0].z, raw[0].w, raw[1].x, raw[1].y, raw[1].z, raw[1].w};
#pragma unroll
  for (int q = 0; q < 6; ++q) w[q] = (sh & 8) ? w[q + 2] : w[q];
#pragma unroll
  for (int q = 0; q < 5; ++q) w[q] = (sh & 4) ? w[q + 1] : w[q];
#pragma unroll
  for (int q = 0; q < 4; ++q) w[q] = (sh & 2) ? __funnelshift_r(w[q], w[q + 1], 16) : w[q];
#pragma unroll
  for (int q = 0; q < 4; ++q) w[q] = 2 * q >= v ? 0u : 2 * q + 1 >= v ? (w[q] & 0xFFFFu) : w[q];
  return make_uint4(w[0], w[1], w[2], w[3]);
}
__device__ __forceinline__ void StShared16(uint32_t dst, const uint4& v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

__device__ __forceinline__ uint32_t ToTf32(uint32_t bits) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(bits)));
  return r;
}

// D += A (16 x k) * B (k x 8) for one warp; k = 16 for 16-bit types, 8 for TF32.
template <typename T>
__device__ __forceinline__ void Mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (std::is_same_v<T, __half>) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

template <typename T, int BM, int BN, int WARPS_M, int WARPS_N, int STAGES>
struct MmaTile {
  static constexpr int kThreads = WARPS_M * WARPS_N * 32;
  static constexpr int kElem = sizeof(T), kVec = 16 / kElem;
  static constexpr int kBK = 64 / kElem;                       // 64 bytes of k per stage
  static constexpr int kARow = 64 + 16;                        // bytes per a row in shared memory
  static constexpr int kBRow = BN * kElem + (kElem == 4 ? 32 : 16);
  static constexpr int kAStage = BM * kARow, kBStage = kBK * kBRow;
  static constexpr int kSmemBytes = STAGES * (kAStage + kBStage);
  static constexpr int kWTM = BM / WARPS_M, kWTN = BN / WARPS_N, kMI = kWTM / 16, kNI = kWTN / 8;
  static constexpr bool kTf32 = std::is_same_v<T, float>;
  static constexpr int kKStep = kTf32 ? 8 : 16;  // both are 32 bytes: two 16-byte chunks
  static_assert(kWTM % 16 == 0 && kWTN % 16 == 0, "warp tile is whole mma tiles (pairs along N)");
};

// STAGED_A / STAGED_B: that operand may have rows that are not 16-byte aligned (checked per batch index;
// aligned rows still take cp.async). Both false: the plain cp.async kernel.
template <typename T, int BM, int BN, int WARPS_M, int WARPS_N, int STAGES, bool STAGED_A = false,
          bool STAGED_B = false>
__global__ void __launch_bounds__(WARPS_M * WARPS_N * 32, 1) MmaKernel(MatmulProblem p) {
  using C = MmaTile<T, BM, BN, WARPS_M, WARPS_N, STAGES>;
  static_assert(!(STAGED_A || STAGED_B) || sizeof(T) == 2, "register staging is for 16-bit types");
  constexpr int kThreads = C::kThreads, kBK = C::kBK, kMI = C::kMI, kNI = C::kNI;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sa = SmemAddr(smem), sb = sa + STAGES * C::kAStage;
  const float* sbf = reinterpret_cast<const float*>(smem + STAGES * C::kAStage);  // TF32 b reads
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N, g = lane / 4, t = lane % 4;

  // Grouped rasterisation: 8 consecutive M-tiles sweep the N-tiles together.
  constexpr int64_t kGroup = 8;
  const int64_t mtiles = (p.m + BM - 1) / BM, ntiles = (p.n + BN - 1) / BN;
  const int64_t pid = blockIdx.x, per_group = kGroup * ntiles, first_m = (pid / per_group) * kGroup;
  const int64_t group_m = mtiles - first_m < kGroup ? mtiles - first_m : kGroup;
  const int64_t m0 = (first_m + (pid % per_group) % group_m) * BM;
  const int64_t n0 = ((pid % per_group) / group_m) * BN;
  const int64_t ktiles = (p.k + kBK - 1) / kBK;

  // Per-thread copy assignments, fixed for the whole k loop: a thread always copies the same rows and
  // 16-byte chunks of each tile, so the 64-bit addressing is set up once and each k-tile only adds its
  // offset (the address math per tile otherwise rivals the mma count at 1-2 warps per scheduler).
  constexpr int kBChunks = BN * C::kElem / 16;
  constexpr int kALoads = BM * 4 / kThreads, kBLoads = kBK * kBChunks / kThreads;
  static_assert(BM * 4 % kThreads == 0 && kBK * kBChunks % kThreads == 0, "whole copies per thread");

  for (int64_t z = blockIdx.y; z < p.batch_count; z += gridDim.y) {
    const BatchOffsets o = OffsetsOf(p, z);
    const T* a = static_cast<const T*>(p.a) + o.a;
    const T* b = static_cast<const T*>(p.b) + o.b;

    const T* a_src[kALoads];
    uint32_t a_dst[kALoads];
    int a_k[kALoads];
    bool a_ok[kALoads];
#pragma unroll
    for (int l = 0; l < kALoads; ++l) {
      const int c = threadIdx.x + l * kThreads, r = c / 4, ch = c % 4;
      a_ok[l] = m0 + r < p.m;
      a_k[l] = ch * C::kVec;
      a_src[l] = a_ok[l] ? a + (m0 + r) * p.k + a_k[l] : a;
      a_dst[l] = r * C::kARow + ch * 16;
    }
    const T* b_src[kBLoads];
    uint32_t b_dst[kBLoads];
    int b_k[kBLoads];
    bool b_ok[kBLoads];
#pragma unroll
    for (int l = 0; l < kBLoads; ++l) {
      const int c = threadIdx.x + l * kThreads, r = c / kBChunks, ch = c % kBChunks;
      b_ok[l] = n0 + ch * C::kVec < p.n;
      b_k[l] = r;
      b_src[l] = b_ok[l] ? b + r * p.n + n0 + ch * C::kVec : b;
      b_dst[l] = r * C::kBRow + ch * 16;
    }
    // Register staging (STAGED_*): an operand with misaligned rows in this batch index is loaded by
    // IssueRow8 into a_raw / b_raw and stored by AlignRow8 into the ring after the next tile's math.
    const bool a_regs = STAGED_A && !(p.k % C::kVec == 0 && IsAligned(a, 16));
    const bool b_regs = STAGED_B && !(p.n % C::kVec == 0 && IsAligned(b, 16));
    constexpr int kARaw = STAGED_A ? kALoads : 1, kBRaw = STAGED_B ? kBLoads : 1;
    uint4 a_raw[kARaw][2], b_raw[kBRaw][2];
    int a_info[kARaw], b_info[kBRaw];
    auto load_tile = [&](int64_t kt, int stage) {
      const int64_t k0 = kt * kBK;
      if (!a_regs) {
#pragma unroll
        for (int l = 0; l < kALoads; ++l) {
          const bool ok = a_ok[l] && k0 + a_k[l] < p.k;
          CpAsync16(sa + stage * C::kAStage + a_dst[l], ok ? a_src[l] + k0 : a, ok);
        }
      } else if constexpr (STAGED_A) {
#pragma unroll
        for (int l = 0; l < kALoads; ++l)  // a_src: the chunk's first element at k = 0
          IssueRow8(a_src[l] + k0, a_ok[l] ? p.k - k0 - a_k[l] : 0, a_raw[l], a_info[l], p.a, p.a_end);
      }
      if (!b_regs) {
#pragma unroll
        for (int l = 0; l < kBLoads; ++l) {
          const bool ok = b_ok[l] && k0 + b_k[l] < p.k;
          CpAsync16(sb + stage * C::kBStage + b_dst[l], ok ? b_src[l] + k0 * p.n : b, ok);
        }
      } else if constexpr (STAGED_B) {
#pragma unroll
        for (int l = 0; l < kBLoads; ++l) {
          const int ch = (threadIdx.x + l * kThreads) % kBChunks;
          const bool ok = b_ok[l] && k0 + b_k[l] < p.k;
          IssueRow8(b_src[l] + k0 * p.n, ok ? p.n - n0 - ch * C::kVec : 0, b_raw[l], b_info[l], p.b,
                    p.b_end);
        }
      }
    };
    // The register-staged half of load_tile(kt, stage): into shared memory once the loads have landed.
    auto store_staged = [&](int stage) {
      if constexpr (STAGED_A) {
        if (a_regs) {
#pragma unroll
          for (int l = 0; l < kALoads; ++l) StShared16(sa + stage * C::kAStage + a_dst[l], AlignRow8(a_raw[l], a_info[l]));
        }
      }
      if constexpr (STAGED_B) {
        if (b_regs) {
#pragma unroll
          for (int l = 0; l < kBLoads; ++l) StShared16(sb + stage * C::kBStage + b_dst[l], AlignRow8(b_raw[l], b_info[l]));
        }
      }
    };

    float acc[kMI][kNI][4];
#pragma unroll
    for (int i = 0; i < kMI; ++i)
#pragma unroll
      for (int j = 0; j < kNI; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < ktiles) {
        load_tile(s, s);
        store_staged(s);
      }
      CpAsyncCommit();  // empty groups keep the wait count uniform
    }
    int read_stage = 0, write_stage = STAGES - 1;
    for (int64_t kt = 0; kt < ktiles; ++kt) {
      CpAsyncWait<STAGES - 2>();
      __syncthreads();  // tile kt landed for every thread; the stage read last iteration is free
      const bool prefetch = kt + STAGES - 1 < ktiles;
      if (prefetch) load_tile(kt + STAGES - 1, write_stage);
      CpAsyncCommit();
      const uint32_t sa_s = sa + read_stage * C::kAStage, sb_s = sb + read_stage * C::kBStage;
      const float* bs = sbf + read_stage * (C::kBStage / 4);
      // All fragments of the tile's k-steps first, then the mmas: the second step's shared-memory
      // latency hides behind the first step's mmas (the asm is volatile, so the order is ours).
      // With register staging the staged rows hold registers across the math: one k-step at a time.
      constexpr int kSteps = kBK / C::kKStep, kGroup = (STAGED_A || STAGED_B) ? 1 : kSteps;
#pragma unroll
      for (int ks0 = 0; ks0 < kSteps; ks0 += kGroup) {
        uint32_t af[kGroup][kMI][4], bf[kGroup][kNI][2];
#pragma unroll
        for (int s = 0; s < kGroup; ++s) {
          const int ks = ks0 + s;
#pragma unroll
          for (int i = 0; i < kMI; ++i) {
            const int row = wm * C::kWTM + i * 16 + (lane & 15);
            LdMatrixX4(af[s][i], sa_s + row * C::kARow + (ks * 2 + (lane >> 4)) * 16);
          }
          if constexpr (C::kTf32) {
#pragma unroll
            for (int j = 0; j < kNI; ++j) {
              const int col = wn * C::kWTN + j * 8 + g, k = ks * 8 + t;
              bf[s][j][0] = __float_as_uint(bs[k * (C::kBRow / 4) + col]);
              bf[s][j][1] = __float_as_uint(bs[(k + 4) * (C::kBRow / 4) + col]);
            }
          } else {
#pragma unroll
            for (int j = 0; j < kNI; j += 2) {
              uint32_t r[4];
              const int krow = ks * 16 + (lane & 15);
              LdMatrixX4Trans(r, sb_s + krow * C::kBRow + ((wn * C::kWTN + j * 8) * C::kElem) + (lane >> 4) * 16);
              bf[s][j][0] = r[0];
              bf[s][j][1] = r[1];
              bf[s][j + 1][0] = r[2];
              bf[s][j + 1][1] = r[3];
            }
          }
        }
#pragma unroll
        for (int s = 0; s < kGroup; ++s) {
          if constexpr (C::kTf32) {
#pragma unroll
            for (int i = 0; i < kMI; ++i)
#pragma unroll
              for (int e = 0; e < 4; ++e) af[s][i][e] = ToTf32(af[s][i][e]);
#pragma unroll
            for (int j = 0; j < kNI; ++j) {
              bf[s][j][0] = ToTf32(bf[s][j][0]);
              bf[s][j][1] = ToTf32(bf[s][j][1]);
            }
          }
#pragma unroll
          for (int i = 0; i < kMI; ++i)
#pragma unroll
            for (int j = 0; j < kNI; ++j) Mma<T>(acc[i][j], af[s][i], bf[s][j]);
        }
      }
      // write_stage was last read before this iteration's barrier; it is read again STAGES - 1 barriers on.
      if ((STAGED_A || STAGED_B) && prefetch) store_staged(write_stage);
      read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
      write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;
    }
    CpAsyncWait<0>();
    __syncthreads();  // every warp is done with the ring: it becomes the epilogue's staging area

    // Epilogue through shared memory, 16 rows of the warp tile at a time: the fragments' scattered
    // 2-element pieces become 16-byte row vectors, so stores (and residual reads) are coalesced and the
    // activation code is emitted once per row piece instead of once per fragment register.
    constexpr int kStageRow = C::kWTN + 4;  // floats; the pad spreads the fragment writes over banks
    float* stage_f = reinterpret_cast<float*>(smem) + warp * 16 * kStageRow;
    const Epilogue<T> ep(p, z, o);
    const bool vec_ok = p.n % C::kVec == 0 && IsAligned(p.out, 16);
#pragma unroll
    for (int i = 0; i < kMI; ++i) {
#pragma unroll
      for (int j = 0; j < kNI; ++j) {
        *reinterpret_cast<float2*>(stage_f + g * kStageRow + j * 8 + 2 * t) = make_float2(acc[i][j][0], acc[i][j][1]);
        *reinterpret_cast<float2*>(stage_f + (g + 8) * kStageRow + j * 8 + 2 * t) =
            make_float2(acc[i][j][2], acc[i][j][3]);
      }
      __syncwarp();
      if (vec_ok) {
        constexpr int kVecsPerRow = C::kWTN / C::kVec;
#pragma unroll 1
        for (int e = lane; e < 16 * kVecsPerRow; e += 32) {
          const int r = e / kVecsPerRow, c = (e % kVecsPerRow) * C::kVec;
          float v[C::kVec];
#pragma unroll
          for (int q = 0; q < C::kVec; ++q) v[q] = stage_f[r * kStageRow + c + q];
          ep.template StoreVec<C::kVec>(m0 + wm * C::kWTM + i * 16 + r, n0 + wn * C::kWTN + c, v, vec_ok);
        }
      } else {
        // Rows that are not 16-byte aligned (odd N): element stores, consecutive lanes on consecutive
        // columns so each store instruction writes 32 contiguous elements of one row.
#pragma unroll 1
        for (int e = lane; e < 16 * C::kWTN; e += 32) {
          const int r = e / C::kWTN, c = e % C::kWTN;
          ep.Store(m0 + wm * C::kWTM + i * 16 + r, n0 + wn * C::kWTN + c, stage_f[r * kStageRow + c]);
        }
      }
      __syncwarp();
    }
    __syncthreads();  // the staging area is the next batch index's pipeline ring
  }
}

}  // namespace jk::mm
