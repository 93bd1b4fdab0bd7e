// SIMT (CUDA-core) matmul kernels: exact float32 accumulation for every dtype.
//   SimtTiled            any shape, any alignment: the reference tier every other tier falls back to.
//   SimtRegisterBlocked  float32, K % 4 == 0, N % 4 == 0, 16-byte aligned: register-blocked outer
//                        products from double-buffered shared memory (the classic SGEMM lineage).
//   SkinnyM              M <= 8: each thread streams 8 columns of b with 16-byte loads; the block splits
//                        K across its threads and reduces with shuffles + shared memory.
// Grids: x = N tiles, y = M tiles, z = batch; y and z are capped at 65535 and the kernels loop over the
// rest, so any M and any batch count work.
#pragma once
#include "common/device.cuh"
#include "matmul/matmul_epilogue.cuh"
#include "matmul/matmul_skinny_mma.cuh"  // LoadClusterShared

namespace jk::mm {

constexpr int kSimtThreads = 256;

// ---- SimtTiled: 64x64x16 tiles, 16x16 threads, 4x4 outputs each (strided by 16: conflict-free) ------
template <typename T>
__global__ void __launch_bounds__(kSimtThreads) SimtTiledKernel(MatmulProblem p) {
  constexpr int BM = 64, BN = 64, BK = 16;
  __shared__ float as[BK][BM + 1];
  __shared__ float bs[BK][BN + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t mtiles = (p.m + BM - 1) / BM;
  for (int64_t z = blockIdx.z; z < p.batch_count; z += gridDim.z) {
    const BatchOffsets o = OffsetsOf(p, z);
    const T* a = static_cast<const T*>(p.a) + o.a;
    const T* b = static_cast<const T*>(p.b) + o.b;
    const Epilogue<T> ep(p, z, o);
    for (int64_t mt = blockIdx.y; mt < mtiles; mt += gridDim.y) {
      const int64_t m0 = mt * BM, n0 = static_cast<int64_t>(blockIdx.x) * BN;
      float acc[4][4] = {};
      for (int64_t k0 = 0; k0 < p.k; k0 += BK) {
        for (int e = threadIdx.x; e < BM * BK; e += kSimtThreads) {
          const int r = e / BK, kk = e % BK;  // consecutive threads walk k: coalesced rows of a
          const int64_t gr = m0 + r, gk = k0 + kk;
          as[kk][r] = (gr < p.m && gk < p.k) ? ToFloat(a[gr * p.k + gk]) : 0.f;
        }
        for (int e = threadIdx.x; e < BK * BN; e += kSimtThreads) {
          const int kk = e / BN, c = e % BN;
          const int64_t gk = k0 + kk, gc = n0 + c;
          bs[kk][c] = (gk < p.k && gc < p.n) ? ToFloat(b[gk * p.n + gc]) : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
          float af[4], bf[4];
#pragma unroll
          for (int i = 0; i < 4; ++i) af[i] = as[kk][ty + 16 * i];
#pragma unroll
          for (int j = 0; j < 4; ++j) bf[j] = bs[kk][tx + 16 * j];
#pragma unroll
          for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(af[i], bf[j], acc[i][j]);
        }
        __syncthreads();
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) ep.Store(m0 + ty + 16 * i, n0 + tx + 16 * j, acc[i][j]);
    }
  }
}

// 16 bytes of global memory, or zeros where !pred. Volatile with a memory clobber so the compiler issues it
// where it is written, ahead of the math that covers its latency.
__device__ __forceinline__ float4 LoadF4OrZero(const float* ptr, bool pred) {
  float4 v;
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %5, 0;\n mov.b32 %0, 0;\n mov.b32 %1, 0;\n mov.b32 %2, 0;\n"
      " mov.b32 %3, 0;\n @p ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];\n}\n"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "l"(ptr), "r"(static_cast<int>(pred))
      : "memory");
  return v;
}

// Asynchronous global -> shared copies of BYTES (4 or 16) bytes; zeros where !pred (src-size 0 reads
// nothing). sm_80+.
template <int BYTES>
__device__ __forceinline__ void CpAsyncOrZero(void* smem, const void* gmem, bool pred) {
  const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(pred ? 16 : 0)
                 : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(gmem), "n"(BYTES),
                 "r"(pred ? BYTES : 0)
                 : "memory");
  }
}
__device__ __forceinline__ void CpAsyncCommitGroup() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void CpAsyncWaitGroup() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// ---- SimtRegisterBlocked (float32) -------------------------------------------------------------------
// BM x BN x BK tiles, 256 threads as 16x16, each owning a TM x TN block split in two halves per axis
// (rows ty*TM/2 + {0, BM/2}, same for columns) so its shared-memory reads are TM/2-wide vectors from
// consecutive addresses across the warp; a is stored k-major (transposed) so its reads are vectors too.
// Two ways to feed shared memory, one barrier per k-tile either way:
//   kStages == 0  (default) the next k-tile fetched into registers during the current tile's math, then
//                 stored to the other of two buffers. The loads are volatile asm issued unconditionally
//                 at the top of the iteration: as plain loads under the same `if` as the store, the
//                 compiler merged them into the store's block after the math and exposed their latency
//                 on every k-tile (H200 4096^3: 29 -> 40 TFLOP/s with the fix);
//   kStages >= 2  a ring of kStages k-tiles filled by cp.async (a transposed 4 bytes at a time, b in
//                 16-byte rows), no registers held: measured slower (34 TFLOP/s at 4096^3 with 8x8 per
//                 thread, BK = 8, two blocks per SM), kept behind JK_MATMUL_SIMT=cpasync.
// kSplitK: the k-tiles are split over the `cluster` CTAs of a thread-block cluster along x (grid.x = N tiles
// x cluster; sm_90): each rank accumulates its share of K, the partial tiles meet through distributed
// shared memory in rank order (deterministic, no scratch buffer, no atomics) and rank r stores its share of
// the tile's rows. For small problems whose few tiles leave most SMs with one CTA and a chain of global
// latencies (512x512x256: 128 CTAs of 8 k-tiles). kGroups = 2 (split-K only) doubles the CTA to 512 threads:
// two groups of 256, each with its own buffers and named barrier, run the two halves of the rank's k-tiles and
// add their partial tiles in shared memory first.
// The body is shared by two kernels so the unsplit one (SimtRegisterBlockedKernel) keeps the signature it
// had before split-K existed. Its SASS changed with the k groups (session 16: the setup code before the k
// loop, not the loop's instruction mix), and the 4096^3 benchmark moved 3.35 -> 3.31 ms with it.
// kSwizzle: a's k-major tile stores row r of k-row k at column r ^ ((k / 4 % 4) * 8). Without it the
// stash's 4-byte stores put the 4 lanes that share a row of a (its 4 k-quads) in one bank, a 4-way conflict
// on every store, paid on the critical path between the math and the barrier; the XOR of bits 3-4 spreads
// them over 32 banks and keeps the math's TM/2-wide vector reads contiguous (TM/2 <= 8).
template <int BM, int BN, int TM, int TN, int BK, int kMinBlocks, int kStages, bool kSplitK, bool kSwizzle = false,
          int kGroups = 1, int kMaxRanks = 8>
__device__ __forceinline__ void SimtRegisterBlockedBody(const MatmulProblem& p, int cluster) {
  constexpr int VM = TM / 2, VN = TN / 2;
  static_assert(BM == 16 * TM && BN == 16 * TN, "16x16 threads cover the tile");
  static_assert(!kSwizzle || (BM >= 32 && VM <= 8), "the XOR stays inside the row and the vector");
  static_assert(kStages == 0 || kStages >= 2, "register double buffering or a cp.async ring");
  constexpr int kBufs = kStages == 0 ? 2 : kStages;
  constexpr int kALoads = (BM * BK / 4 + kSimtThreads - 1) / kSimtThreads;  // float4 per thread
  constexpr int kBLoads = (BK * BN / 4 + kSimtThreads - 1) / kSimtThreads;
  static_assert(kGroups == 1 || (kSplitK && kGroups == 2), "two k groups: split-K kernels only");
  __shared__ __align__(16) float as_all[kGroups][kBufs][BK][BM];
  __shared__ __align__(16) float bs_all[kGroups][kBufs][BK][BN];
  static_assert(!kSplitK || kStages == 0, "split-K only with register double buffering");
  __shared__ __align__(16) float red[kSplitK ? BM * BN : 1];
  if constexpr (!kSplitK) cluster = 1;
  const int rank = kSplitK ? static_cast<int>(blockIdx.x) % cluster : 0;
  // kGroups: 256-thread groups, each running its own contiguous half of the CTA's k-tiles on its own buffers
  // (tid is the thread's index in its group); their partial tiles meet in red[] before the cluster's.
  constexpr int kThreads = kSimtThreads * kGroups;
  // (A function, not a variable: with one group every use is threadIdx.x itself.)
  const auto tid = [] { return kGroups == 1 ? threadIdx.x : threadIdx.x % kSimtThreads; };
  const int grp = kGroups == 1 ? 0 : static_cast<int>(threadIdx.x / kSimtThreads);
  auto& as = as_all[grp];
  auto& bs = bs_all[grp];
  // The k loop's barrier: the CTA's, or the group's own (named barrier 1 + grp; the groups' trip counts can differ).
  const auto group_sync = [&] {
    if constexpr (kGroups == 1) __syncthreads();
    else asm volatile("bar.sync %0, %1;\n" ::"r"(1 + grp), "n"(kSimtThreads) : "memory");
  };
  const int tx = tid() % 16, ty = tid() / 16;
  const int64_t mtiles = (p.m + BM - 1) / BM;
  for (int64_t z = blockIdx.z; z < p.batch_count; z += gridDim.z) {
    const BatchOffsets o = OffsetsOf(p, z);
    for (int64_t mt = blockIdx.y; mt < mtiles; mt += gridDim.y) {
      const int64_t m0 = mt * BM, n0 = static_cast<int64_t>(blockIdx.x / cluster) * BN;
      // Each thread's load slots as pointers advanced by one k-tile per step, with the row/column checks
      // made once: the k loop then holds a few pointers instead of 64-bit index math (registers decide
      // whether the 8x8 tile fits two blocks per SM). Rows/columns outside the matrix read row/column 0.
      const float* pa[kALoads];
      const float* pb[kBLoads];
      int a_kq[kALoads], b_kk[kBLoads];
      bool a_ok[kALoads], b_ok[kBLoads];
#pragma unroll
      for (int l = 0; l < kALoads; ++l) {
        const int e = tid() + l * kSimtThreads, r = e / (BK / 4);
        a_kq[l] = (e % (BK / 4)) * 4;
        a_ok[l] = e < BM * BK / 4 && m0 + r < p.m;
        pa[l] = static_cast<const float*>(p.a) + o.a + (a_ok[l] ? (m0 + r) * p.k : 0) + a_kq[l];
      }
#pragma unroll
      for (int l = 0; l < kBLoads; ++l) {
        const int e = tid() + l * kSimtThreads, c = (e % (BN / 4)) * 4;
        b_kk[l] = e / (BN / 4);
        b_ok[l] = e < BK * BN / 4 && n0 + c < p.n;
        pb[l] = static_cast<const float*>(p.b) + o.b + (b_ok[l] ? n0 + c : 0) + b_kk[l] * p.n;
      }
      // Shared-memory destinations of a thread's slots (the same in every buffer).
      auto a_col = [](int k, int r) { return kSwizzle ? r ^ (((k >> 2) & 3) << 3) : r; };
      auto a_dst = [&](int buf, int l, int q) -> float* {
        const int e = tid() + l * kSimtThreads;
        return &as[buf][a_kq[l] + q][a_col(a_kq[l] + q, e / (BK / 4))];
      };
      auto b_dst = [&](int buf, int l) -> float* { return &bs[buf][b_kk[l]][(tid() + l * kSimtThreads) % (BN / 4) * 4]; };
      auto a_live = [&](int l) { return tid() + l * kSimtThreads < BM * BK / 4; };
      auto b_live = [&](int l) { return tid() + l * kSimtThreads < BK * BN / 4; };
      // k-tile kt into buffer buf with cp.async (zeros outside the matrix; K and N are multiples of 4).
      auto issue = [&](int64_t kt, int buf) {
        const int64_t k0 = kt * BK;
#pragma unroll
        for (int l = 0; l < kALoads; ++l) {
          if (!a_live(l)) continue;
          const bool ok = a_ok[l] && k0 + a_kq[l] < p.k;
#pragma unroll
          for (int q = 0; q < 4; ++q) CpAsyncOrZero<4>(a_dst(buf, l, q), pa[l] + k0 + q, ok);
        }
#pragma unroll
        for (int l = 0; l < kBLoads; ++l)
          if (b_live(l)) CpAsyncOrZero<16>(b_dst(buf, l), pb[l] + k0 * p.n, b_ok[l] && k0 + b_kk[l] < p.k);
      };
      float4 ra[kALoads], rb[kBLoads];
      auto fetch = [&](int64_t kt) {  // k-tile kt into registers
        const int64_t k0 = kt * BK;
#pragma unroll
        for (int l = 0; l < kALoads; ++l) ra[l] = LoadF4OrZero(pa[l] + k0, a_ok[l] && k0 + a_kq[l] < p.k);
#pragma unroll
        for (int l = 0; l < kBLoads; ++l) rb[l] = LoadF4OrZero(pb[l] + k0 * p.n, b_ok[l] && k0 + b_kk[l] < p.k);
      };
      auto stash = [&](int buf) {  // registers into buffer buf
#pragma unroll
        for (int l = 0; l < kALoads; ++l) {
          if (!a_live(l)) continue;
          *a_dst(buf, l, 0) = ra[l].x;
          *a_dst(buf, l, 1) = ra[l].y;
          *a_dst(buf, l, 2) = ra[l].z;
          *a_dst(buf, l, 3) = ra[l].w;
        }
#pragma unroll
        for (int l = 0; l < kBLoads; ++l)
          if (b_live(l)) *reinterpret_cast<float4*>(b_dst(buf, l)) = rb[l];
      };
      float acc[TM][TN] = {};
      auto math = [&](int buf) {
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
          float af[TM], bf[TN];
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const Pack<float, VM> va =
                *reinterpret_cast<const Pack<float, VM>*>(&as[buf][kk][a_col(kk, ty * VM + h * BM / 2)]);
            const Pack<float, VN> vb = *reinterpret_cast<const Pack<float, VN>*>(&bs[buf][kk][tx * VN + h * BN / 2]);
#pragma unroll
            for (int i = 0; i < VM; ++i) af[h * VM + i] = va.v[i];
#pragma unroll
            for (int j = 0; j < VN; ++j) bf[h * VN + j] = vb.v[j];
          }
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(af[i], bf[j], acc[i][j]);
        }
      };
      const int64_t ktiles_all = (p.k + BK - 1) / BK;
      // This rank's k-tiles [kt0, ktiles); everything when not split.
      const int64_t per_rank = (ktiles_all + cluster - 1) / cluster;
      const int64_t kt0 = rank * per_rank;
      const int64_t rank_end = kt0 + per_rank < ktiles_all ? kt0 + per_rank : ktiles_all;
      // This group's k-tiles [gk0, ktiles) of the rank's.
      const int64_t per_group = (rank_end - kt0 + kGroups - 1) / kGroups;
      const int64_t gk0 = kGroups == 1 ? kt0 : kt0 + grp * per_group < rank_end ? kt0 + grp * per_group : rank_end;
      const int64_t ktiles = kGroups == 1 ? rank_end : gk0 + per_group < rank_end ? gk0 + per_group : rank_end;
      if constexpr (kStages == 0) {
        fetch(gk0);  // past K it reads nothing and yields zeros
        stash(0);
        group_sync();
        for (int64_t kt = gk0; kt < ktiles; ++kt) {
          const int buf = (kt - gk0) & 1;
          fetch(kt + 1);  // past the last k-tile it reads nothing and yields zeros
          math(buf);
          stash(buf ^ 1);  // the other buffer was last read before the previous barrier
          group_sync();
        }
      } else {
        // Groups are committed even when empty, so "all but the newest kStages - 2 groups complete"
        // always means "k-tile kt has landed".
#pragma unroll
        for (int s = 0; s < kStages - 1; ++s) {
          if (s < ktiles) issue(s, s);
          CpAsyncCommitGroup();
        }
        int buf = 0;
        for (int64_t kt = 0; kt < ktiles; ++kt) {
          CpAsyncWaitGroup<kStages - 2>();
          __syncthreads();  // k-tile kt visible to all; the buffer refilled below was consumed at kt - 1
          const int64_t next = kt + kStages - 1;
          const int nbuf = buf == 0 ? kStages - 1 : buf - 1;
          if (next < ktiles) issue(next, nbuf);
          CpAsyncCommitGroup();
          math(buf);
          buf = buf + 1 == kStages ? 0 : buf + 1;
        }
        CpAsyncWaitGroup<0>();
        __syncthreads();  // the next tile's prologue refills buffers still being read
      }
      const Epilogue<float> ep(p, z, o);  // built here: its pointers need no registers in the k loop
      if constexpr (kSplitK) {
        const bool vec_out = p.n % 4 == 0 && IsAligned(p.out, 16);
        // The CTA's partial tile: group 0's, then group 1's added (a fixed order: deterministic). red[] was
        // last read before the previous tile's closing barrier.
        const auto to_red = [&](bool add) {
#pragma unroll
          for (int i = 0; i < TM; ++i) {
            const int row = ty * VM + (i / VM) * (BM / 2) + i % VM;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
              float& r = red[row * BN + tx * VN + (j / VN) * (BN / 2) + j % VN];
              r = add ? r + acc[i][j] : acc[i][j];
            }
          }
        };
        if (grp == 0) to_red(false);
        if constexpr (kGroups == 2) {
          __syncthreads();
          if (grp == 1) to_red(true);
        }
        if (cluster > 1) {  // every rank's partial tile is complete; red[] is all a CTA publishes
          ClusterArriveAfterSharedWrites();
          ClusterWait();
        } else {
          __syncthreads();
        }
        // Rank r sums and stores rows [r BM / cluster, (r + 1) BM / cluster) of the tile (cluster is a power
        // of two <= 8 dividing BM): 4 columns a load. A round's loads (one per rank) are predicated, not
        // branched on the run-time rank count, so they issue back to back: with a `break` per rank each load
        // sat behind a branch after the previous one's sums, one distributed-shared-memory latency per rank.
        // A thread done reading arrives on the closing barrier before its stores and waits after them, so the
        // barrier's latency overlaps them; red[] stays alive until every rank has read it.
        // Both barriers' arrivals are the lean ones (ClusterArriveAfterSharedWrites / AfterPeerReads: no
        // MEMBAR.ALL.GPU), with the predicated loads: H200 (bench/lab/s26_h200.md call 1, us before / after, jnp):
        // 512x512x256 9.0 / 8.8 (6.9), 512^3 13.5 / 13.1 (13.1), 512x512x1024 22.4-22.6 / 21.7 (18.2),
        // 256x1024x512 13.5 / 13.2 (12.9), 384^3 10.9 / 10.8 (10.0); ties at 384x256x256 and 256x512x1024.
        // Then clusters of 2 with 2 loads a round, not 8 (kMaxRanks), and plain outputs in one 16-byte store
        // (Epilogue::StoreVec): 512x512x256 8.8 -> 8.2, 384^3 10.8 -> 10.4, 256x1024x512 13.2 -> 13.0 (call 3).
        static_assert(BM * BN % (4 * kThreads) == 0 && BM % 8 == 0, "whole float4 rounds, rank shares of rows");
        constexpr int kRounds = BM * BN / (4 * kThreads);  // float4 per thread without a split
        const int share = BM * BN / cluster;
        float4 sum[kRounds];
#pragma unroll
        for (int i = 0; i < kRounds; ++i) {
          const bool live = 4 * (static_cast<int>(threadIdx.x) + i * kThreads) < share;
          const int e = live ? rank * share + 4 * (static_cast<int>(threadIdx.x) + i * kThreads) : 0;
          float4 v[kMaxRanks];
#pragma unroll
          for (int r = 0; r < kMaxRanks; ++r)
            v[r] = LoadClusterShared4If(&red[e], static_cast<uint32_t>(r < cluster ? r : 0), live && r < cluster);
          sum[i] = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
          for (int r = 0; r < kMaxRanks; ++r)
            if (r < cluster) sum[i].x += v[r].x, sum[i].y += v[r].y, sum[i].z += v[r].z, sum[i].w += v[r].w;
        }
        if (cluster > 1) ClusterArriveAfterPeerReads();
#pragma unroll
        for (int i = 0; i < kRounds; ++i) {
          if (4 * (static_cast<int>(threadIdx.x) + i * kThreads) >= share) break;
          const int e = rank * share + 4 * (static_cast<int>(threadIdx.x) + i * kThreads);
          const float sv[4] = {sum[i].x, sum[i].y, sum[i].z, sum[i].w};
          ep.template StoreVec<4>(m0 + e / BN, n0 + e % BN, sv, vec_out);
        }
        if (cluster > 1) ClusterWait();
        else __syncthreads();
      } else {
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const int64_t row = m0 + ty * VM + (i / VM) * (BM / 2) + i % VM;
#pragma unroll
          for (int j = 0; j < TN; ++j) ep.Store(row, n0 + tx * VN + (j / VN) * (BN / 2) + j % VN, acc[i][j]);
        }
      }
    }
  }
}

template <int BM, int BN, int TM, int TN, int BK, int kMinBlocks, int kStages, bool kSwizzle = false>
__global__ void __launch_bounds__(kSimtThreads, kMinBlocks) SimtRegisterBlockedKernel(MatmulProblem p) {
  SimtRegisterBlockedBody<BM, BN, TM, TN, BK, kMinBlocks, kStages, false, kSwizzle>(p, 1);
}
// kMaxRanks: the largest cluster the launch may have (the reduction issues that many predicated loads a round).
template <int BM, int BN, int TM, int TN, int BK, int kMinBlocks, int kGroups = 1, int kMaxRanks = 8>
__global__ void __launch_bounds__(kSimtThreads * kGroups, kMinBlocks)
    SimtRegisterBlockedSplitKernel(MatmulProblem p, int cluster) {
  if (cluster > kMaxRanks) __trap();  // the launcher never asks (LaunchSimtSplit's callers)
  SimtRegisterBlockedBody<BM, BN, TM, TN, BK, kMinBlocks, 0, true, false, kGroups, kMaxRanks>(p, cluster);
}

// ---- SkinnyM: M <= kSkinnyMaxM, N % 8 == 0, 16-byte aligned b -----------------------------------------
// Decode-shaped problems are a stream over b (K x N); the work is keeping enough of that stream in
// flight. A block owns 32 columns (4 groups of 8) and splits K over 64 slices; a thread takes chunks of
// kKc consecutive k (16 bytes of a row of a): per chunk it issues kKc independent 16-byte-or-wider loads
// of b rows plus one 16-byte load per row of a, then kKc x 8 x M FMAs into M x 8 float accumulators.
// Partial sums meet by shuffles (the warp's 8 slices) then shared memory (the block's 8 warps).
constexpr int kSkinnyMaxM = 8;
constexpr int kSkinnyCols = 32;

template <typename T, int MR>
__global__ void __launch_bounds__(kSimtThreads) SkinnyMKernel(MatmulProblem p) {
  constexpr int kGroups = kSkinnyCols / 8, kSlices = kSimtThreads / kGroups, kWarps = kSimtThreads / 32;
  constexpr int kKc = 16 / sizeof(T);  // k per chunk: one 16-byte vector of a row of a
  __shared__ float part[kWarps][MR][kSkinnyCols];
  const int g = threadIdx.x % kGroups, slice = threadIdx.x / kGroups;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int64_t z = blockIdx.z; z < p.batch_count; z += gridDim.z) {
    const BatchOffsets o = OffsetsOf(p, z);
    const T* a = static_cast<const T*>(p.a) + o.a;
    const T* b = static_cast<const T*>(p.b) + o.b;
    const Epilogue<T> ep(p, z, o);
    const int64_t c0 = static_cast<int64_t>(blockIdx.x) * kSkinnyCols + g * 8;
    const bool live = c0 < p.n;  // n % 8 == 0: a group is wholly inside or wholly outside
    // Vector loads of a need every row start 16-byte aligned.
    const bool a_vec = p.k % kKc == 0 && IsAligned(a, 16);
    float acc[MR][8] = {};
    for (int64_t k0 = static_cast<int64_t>(slice) * kKc; k0 < p.k; k0 += static_cast<int64_t>(kSlices) * kKc) {
      const int kn = p.k - k0 < kKc ? static_cast<int>(p.k - k0) : kKc;
      Pack<T, 8> vb[kKc];
#pragma unroll
      for (int u = 0; u < kKc; ++u)
        if (live && u < kn) vb[u] = *reinterpret_cast<const Pack<T, 8>*>(b + (k0 + u) * p.n + c0);
#pragma unroll
      for (int r = 0; r < MR; ++r) {
        if (r >= p.m) break;
        float av[kKc];
        if (a_vec && kn == kKc) {
          const Pack<T, kKc> va = *reinterpret_cast<const Pack<T, kKc>*>(a + r * p.k + k0);
#pragma unroll
          for (int u = 0; u < kKc; ++u) av[u] = ToFloat(va.v[u]);
        } else {
#pragma unroll
          for (int u = 0; u < kKc; ++u) av[u] = u < kn ? ToFloat(a[r * p.k + k0 + u]) : 0.f;
        }
        if (!live) continue;
#pragma unroll
        for (int u = 0; u < kKc; ++u) {
          if (u >= kn) break;
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[r][j] = fmaf(av[u], ToFloat(vb[u].v[j]), acc[r][j]);
        }
      }
    }
    // Lanes with the same g hold the same columns: reduce over the warp's 8 slices (lane bits 2..4).
#pragma unroll
    for (int r = 0; r < MR; ++r)
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int s = kGroups; s < 32; s *= 2) acc[r][j] += __shfl_xor_sync(0xffffffffu, acc[r][j], s);
    __syncthreads();  // part[] may still be read by the previous batch index
    if (lane < kGroups) {
#pragma unroll
      for (int r = 0; r < MR; ++r)
#pragma unroll
        for (int j = 0; j < 8; ++j) part[warp][r][g * 8 + j] = acc[r][j];
    }
    __syncthreads();
    for (int e = threadIdx.x; e < MR * kSkinnyCols; e += kSimtThreads) {
      const int r = e / kSkinnyCols, c = e % kSkinnyCols;
      float s = 0.f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) s += part[w][r][c];
      ep.Store(r, static_cast<int64_t>(blockIdx.x) * kSkinnyCols + c, s);
    }
  }
}

}  // namespace jk::mm
