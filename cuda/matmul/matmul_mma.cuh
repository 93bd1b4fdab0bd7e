// Tensor-core matmul with mma.sync (sm_80+): bf16/f16 via m16n8k16, float32 at DEFAULT/HIGH precision via
// TF32 m16n8k8 (inputs rounded to TF32 with cvt.rna, as XLA's default float32 dot does on GPUs).
//
// Block tile BM x BN x (64 bytes of k), WARPS_M x WARPS_N warps each owning a (BM/WARPS_M) x (BN/WARPS_N)
// accumulator tile in registers. Tiles stream through a STAGES-deep cp.async ring in shared memory
// (16-byte copies, zero-filled past the matrix edges), so the loads of tile k+STAGES-1 overlap the math
// of tile k. Shared rows are padded by 16 bytes (32 for TF32's b) so ldmatrix / scalar fragment reads hit
// 8 distinct bank groups without a swizzle. Blocks are rasterised in groups of 8 M-tiles so neighbouring
// blocks share panels of a and b in L2.
// Requires K and N multiples of 16 bytes' worth of elements and 16-byte aligned a and b.
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

template <typename T, int BM, int BN, int WARPS_M, int WARPS_N, int STAGES>
__global__ void __launch_bounds__(WARPS_M * WARPS_N * 32, 1) MmaKernel(MatmulProblem p) {
  using C = MmaTile<T, BM, BN, WARPS_M, WARPS_N, STAGES>;
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
    auto load_tile = [&](int64_t kt, int stage) {
      const int64_t k0 = kt * kBK;
#pragma unroll
      for (int l = 0; l < kALoads; ++l) {
        const bool ok = a_ok[l] && k0 + a_k[l] < p.k;
        CpAsync16(sa + stage * C::kAStage + a_dst[l], ok ? a_src[l] + k0 : a, ok);
      }
#pragma unroll
      for (int l = 0; l < kBLoads; ++l) {
        const bool ok = b_ok[l] && k0 + b_k[l] < p.k;
        CpAsync16(sb + stage * C::kBStage + b_dst[l], ok ? b_src[l] + k0 * p.n : b, ok);
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
      if (s < ktiles) load_tile(s, s);
      CpAsyncCommit();  // empty groups keep the wait count uniform
    }
    int read_stage = 0, write_stage = STAGES - 1;
    for (int64_t kt = 0; kt < ktiles; ++kt) {
      CpAsyncWait<STAGES - 2>();
      __syncthreads();  // tile kt landed for every thread; the stage read last iteration is free
      if (kt + STAGES - 1 < ktiles) load_tile(kt + STAGES - 1, write_stage);
      CpAsyncCommit();
      const uint32_t sa_s = sa + read_stage * C::kAStage, sb_s = sb + read_stage * C::kBStage;
      const float* bs = sbf + read_stage * (C::kBStage / 4);
      // All fragments of the tile's k-steps first, then the mmas: the second step's shared-memory
      // latency hides behind the first step's mmas (the asm is volatile, so the order is ours).
      constexpr int kSteps = kBK / C::kKStep;
      uint32_t af[kSteps][kMI][4], bf[kSteps][kNI][2];
#pragma unroll
      for (int ks = 0; ks < kSteps; ++ks) {
#pragma unroll
        for (int i = 0; i < kMI; ++i) {
          const int row = wm * C::kWTM + i * 16 + (lane & 15);
          LdMatrixX4(af[ks][i], sa_s + row * C::kARow + (ks * 2 + (lane >> 4)) * 16);
        }
        if constexpr (C::kTf32) {
#pragma unroll
          for (int j = 0; j < kNI; ++j) {
            const int col = wn * C::kWTN + j * 8 + g, k = ks * 8 + t;
            bf[ks][j][0] = __float_as_uint(bs[k * (C::kBRow / 4) + col]);
            bf[ks][j][1] = __float_as_uint(bs[(k + 4) * (C::kBRow / 4) + col]);
          }
        } else {
#pragma unroll
          for (int j = 0; j < kNI; j += 2) {
            uint32_t r[4];
            const int krow = ks * 16 + (lane & 15);
            LdMatrixX4Trans(r, sb_s + krow * C::kBRow + ((wn * C::kWTN + j * 8) * C::kElem) + (lane >> 4) * 16);
            bf[ks][j][0] = r[0];
            bf[ks][j][1] = r[1];
            bf[ks][j + 1][0] = r[2];
            bf[ks][j + 1][1] = r[3];
          }
        }
      }
#pragma unroll
      for (int ks = 0; ks < kSteps; ++ks) {
        if constexpr (C::kTf32) {
#pragma unroll
          for (int i = 0; i < kMI; ++i)
#pragma unroll
            for (int e = 0; e < 4; ++e) af[ks][i][e] = ToTf32(af[ks][i][e]);
#pragma unroll
          for (int j = 0; j < kNI; ++j) {
            bf[ks][j][0] = ToTf32(bf[ks][j][0]);
            bf[ks][j][1] = ToTf32(bf[ks][j][1]);
          }
        }
#pragma unroll
        for (int i = 0; i < kMI; ++i)
#pragma unroll
          for (int j = 0; j < kNI; ++j) Mma<T>(acc[i][j], af[ks][i], bf[ks][j]);
      }
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
      constexpr int kVecsPerRow = C::kWTN / C::kVec;
#pragma unroll 1
      for (int e = lane; e < 16 * kVecsPerRow; e += 32) {
        const int r = e / kVecsPerRow, c = (e % kVecsPerRow) * C::kVec;
        float v[C::kVec];
#pragma unroll
        for (int q = 0; q < C::kVec; ++q) v[q] = stage_f[r * kStageRow + c + q];
        ep.template StoreVec<C::kVec>(m0 + wm * C::kWTM + i * 16 + r, n0 + wn * C::kWTN + c, v, vec_ok);
      }
      __syncwarp();
    }
    __syncthreads();  // the staging area is the next batch index's pipeline ring
  }
}

}  // namespace jk::mm
