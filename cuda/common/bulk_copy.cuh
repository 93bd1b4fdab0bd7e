// sm_90 bulk copies into shared memory (cp.async.bulk) completing on mbarriers: the building blocks of the
// norm and softmax "bulk" tiers, which stage whole rows in shared memory so their loads stay in flight
// through the previous row's reductions. Device code only. Before sm_90 these helpers do nothing and the
// kernels copy rows themselves (the launchers only choose the bulk tiers on sm_90+).
#pragma once
#include <cuda.h>  // CUtensorMap (a type only: nothing from the driver library is linked)

#include <cstdint>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define JK_HAS_BULK_COPY 1
#endif

namespace jk {

__device__ __forceinline__ uint32_t SmemAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
// One arrival (the issuing thread's) completes a phase, with the copy's transaction bytes.
__device__ __forceinline__ void BarrierInit(uint64_t* bar) {
#ifdef JK_HAS_BULK_COPY
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(SmemAddress(bar)) : "memory");
#endif
}
// Orders this thread's shared-memory accesses in the generic proxy (with what other threads released to it
// through a barrier it acquired) against its later async-proxy operations: the copy engine's reads of data
// just written (TMA stores), or its writes into a slot that generic loads read before the slot was handed
// back (a bulk copy refilling a ring slot).
__device__ __forceinline__ void FenceProxyAsync() {
#ifdef JK_HAS_BULK_COPY
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
// Makes the initialised barriers visible to the copy engine (the async proxy).
__device__ __forceinline__ void BarrierInitFence() {
#ifdef JK_HAS_BULK_COPY
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  FenceProxyAsync();
#endif
}
// Arms `bar` for `bytes` and starts the copy of [src, src + bytes) into dst (both 16-byte aligned).
__device__ __forceinline__ void BulkLoadRow(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
#ifdef JK_HAS_BULK_COPY
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(SmemAddress(bar)), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   SmemAddress(dst)),
               "l"(src), "r"(bytes), "r"(SmemAddress(bar))
               : "memory");
#endif
}
// The same two steps with shared-window addresses (SmemAddress) and a tensor map: arms `bar` for `bytes`
// (MbarExpectTx), then one box of a 3-d tensor map (coordinates innermost first) into `dst`, completing on `bar`
// (TmaLoad3d). The matmul tiers (wgmma, SkinnyPipe) address their rings this way.
__device__ __forceinline__ void MbarExpectTx(uint32_t bar, uint32_t bytes) {
#ifdef JK_HAS_BULK_COPY
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
#endif
}
__device__ __forceinline__ void TmaLoad3d(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2,
                                          uint32_t bar) {
#ifdef JK_HAS_BULK_COPY
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
      ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar) : "memory");
#endif
}
// Bulk groups: a thread's bulk stores out of shared memory (cp.async.bulk[.tensor] ... bulk_group) committed as one
// group; then waits until at most N of its groups still read shared memory (the slots may be refilled), or until all
// have completed. The matmul epilogues' TMA stores and the transpose's bulk row copies.
__device__ __forceinline__ void BulkCommit() {
#ifdef JK_HAS_BULK_COPY
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void BulkWaitRead() {
#ifdef JK_HAS_BULK_COPY
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
#endif
}
__device__ __forceinline__ void BulkWaitAll() {
#ifdef JK_HAS_BULK_COPY
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
}
// Per-thread asynchronous 16-byte copies global -> shared (sm_80 cp.async, no register staging): a thread
// issues several, commits them as one group and waits for its own groups; the data is then visible to that
// thread only (the hybrid cluster tier reads back only the slots each thread filled, so no CTA barrier).
__device__ __forceinline__ void CopyAsync16(void* dst, const void* src) {
#ifdef JK_HAS_BULK_COPY
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(SmemAddress(dst)), "l"(src) : "memory");
#endif
}
__device__ __forceinline__ void CopyAsyncCommit() {
#ifdef JK_HAS_BULK_COPY
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void CopyAsyncWaitAll() {
#ifdef JK_HAS_BULK_COPY
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
}
// Spins until the phase of `bar` with this parity has completed (the copy has landed).
__device__ __forceinline__ void BarrierWait(uint64_t* bar, uint32_t parity) {
#ifdef JK_HAS_BULK_COPY
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(SmemAddress(bar)), "r"(parity)
        : "memory");
  } while (!done);
#endif
}

// The same wait, acquiring at cluster scope: for phases completed by other CTAs of the cluster (remote
// arrivals, st.async complete_tx), whose shared-memory writes the waiter then reads.
__device__ __forceinline__ void ClusterWait(uint64_t* bar, uint32_t parity) {
#ifdef JK_HAS_BULK_COPY
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(SmemAddress(bar)), "r"(parity)
        : "memory");
  } while (!done);
#endif
}

// The same shared-memory location (`smem`, an address from SmemAddress) in the CTA of cluster rank `rank`.
__device__ __forceinline__ uint32_t ClusterSmemAddress(uint32_t smem, uint32_t rank) {
  uint32_t remote = 0;
#ifdef JK_HAS_BULK_COPY
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem), "r"(rank));
#endif
  return remote;
}

}  // namespace jk
