// kRowCopyBulk (lab candidate, sm_90): the row copy of short runs (e.g. the attention permute
// (0, 2, 1, 3), 128-byte runs) on the bulk copy engine. A persistent block streams chunks of the input
// (whole runs, contiguous) into shared memory with one cp.async.bulk each, kStages chunks in flight,
// then writes every run back with its own bulk store (cp.async.bulk.global.shared::cta): the threads only
// compute output offsets, no data passes through registers. Input order as RowCopy<.., kInputOrder>:
// `rows` sorted by input stride, `out` strides in bytes, runs a multiple of 16 bytes, buffers 16-byte
// aligned. The CPU emulator (no bulk copy engine) runs a plain per-run copy instead.
// Measured on an H200 (bench/lab/transpose_s4_h200.md): (32, 128, 64, 64) bfloat16 (0, 2, 1, 3) 20.22 us
// against 17.97 for the 16-byte row copy in input order: one bulk store per 128-byte run is too small a
// transfer for the copy engine. Lab token `rowbulk` only.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "transpose/transpose_kernels.cuh"
#ifndef JK_EMULATOR_DYNAMIC_SMEM
#include "common/bulk_copy.cuh"
#endif

namespace jk::transpose {

inline constexpr int kBulkChunkBytes = 8192, kBulkStages = 4, kBulkThreads = 64;

#if defined(JK_HAS_BULK_COPY)
__device__ __forceinline__ void BulkStoreRun(unsigned char* dst, const unsigned char* src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst), "r"(SmemAddress(src)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void BulkCommit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void BulkWaitRead() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
__device__ __forceinline__ void BulkWaitAll() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
#endif

// Requires run bytes (p.row_vecs * 16) <= kBulkChunkBytes.
template <typename I>
__global__ void __launch_bounds__(kBulkThreads) RowCopyBulk(RowArgs p) {
  const int64_t run_bytes = p.row_vecs * 16, runs = p.total_vecs / p.row_vecs;
  const int64_t per = kBulkChunkBytes / run_bytes;  // runs per chunk
  const int64_t chunks = (runs + per - 1) / per;
#if defined(JK_HAS_BULK_COPY)
  __shared__ __align__(128) unsigned char buf[kBulkStages][kBulkChunkBytes];
  __shared__ uint64_t bar[kBulkStages];
  auto load = [&](int s, int64_t c) {
    const int64_t r0 = c * per, n = runs - r0 < per ? runs - r0 : per;
    BulkLoadRow(buf[s], p.x + r0 * run_bytes, static_cast<uint32_t>(n * run_bytes), &bar[s]);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < kBulkStages; ++s) BarrierInit(&bar[s]);
    BarrierInitFence();
    for (int s = 0; s < kBulkStages; ++s) {
      const int64_t c = blockIdx.x + int64_t{s} * gridDim.x;
      if (c < chunks) load(s, c);
    }
  }
  __syncthreads();
  int it = 0;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x, ++it) {
    const int s = it % kBulkStages;
    BarrierWait(&bar[s], (it / kBulkStages) & 1);
    const int64_t r0 = c * per, n = runs - r0 < per ? runs - r0 : per;
    for (int64_t r = threadIdx.x; r < n; r += kBulkThreads) {
      int64_t in, out;
      Decompose<I>(p.rows, static_cast<I>(r0 + r), &in, &out);
      JK_DEVICE_ASSERT(out >= 0 && out + run_bytes <= p.bytes);
      BulkStoreRun(p.y + out, buf[s] + r * run_bytes, static_cast<uint32_t>(run_bytes));
    }
    BulkCommit();
    BulkWaitRead();   // this thread's stores have read buf[s]
    __syncthreads();  // everyone's have: refill it
    const int64_t next = c + int64_t{kBulkStages} * gridDim.x;
    if (threadIdx.x == 0 && next < chunks) load(s, next);
  }
  BulkWaitAll();
#else  // emulator / pre-sm_90: the same chunks, copied run by run
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const int64_t r0 = c * per, n = runs - r0 < per ? runs - r0 : per;
    for (int64_t r = threadIdx.x; r < n; r += kBulkThreads) {
      int64_t in, out;
      Decompose<I>(p.rows, static_cast<I>(r0 + r), &in, &out);
      JK_DEVICE_ASSERT(out >= 0 && out + run_bytes <= p.bytes);
      for (int64_t b = 0; b < run_bytes; b += 16)
        *reinterpret_cast<uint4*>(p.y + out + b) = *reinterpret_cast<const uint4*>(p.x + (r0 + r) * run_bytes + b);
    }
  }
#endif
}

}  // namespace jk::transpose
