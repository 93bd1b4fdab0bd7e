// A per-row exchange of one small value (a float2 or float4 of statistics) among the CTAs of a thread-block
// cluster without a cluster barrier per row: the persistent cluster tiers (softmax_cluster.cuh,
// norm_cluster.cuh). Device code only, sm_90+.
//
// Why: `cluster.sync()` per row compiles to MEMBAR.ALL.GPU + a full-cluster arrive/wait: every thread first
// waits until its stores of the previous row are visible GPU-wide, then for every thread of every CTA. Here
// thread 0 of each CTA pushes its value into every peer's slot with st.async, which completes a transaction
// on the peer's local mbarrier; each CTA then waits only on its own mbarrier (peers' values landed), with no
// fence on the global stores.
//
// Slots and barriers come in two sets indexed by row parity. A set is reused two rows later: a peer can only
// get there after this CTA published the row in between, which its thread 0 does after a __syncthreads that
// follows every thread's reads of the set (the block reduction of that row). Each barrier completes one phase
// per use: thread 0 arms it (one arrival, the peers' bytes expected); a peer's bytes may land before the
// arming (the transaction count goes negative, the phase cannot complete without the arrival).
#pragma once
#include <cooperative_groups.h>

#include <cstdint>
#include <cstdlib>

#include "common/bulk_copy.cuh"

namespace jk {

// Host side: whether the cluster tiers exchange through ClusterExchange (1) or a cluster barrier per row (0).
// Lab knob JK_CLUSTER_EXCHANGE = 0 / 1, re-read at every launch (XLA command buffers off) so one process can
// time both; unset: the default, from the H200 lab (bench/lab/s10_h200.md).
inline constexpr bool kClusterExchangeDefault = true;
inline bool ClusterExchangeOn() {
  const char* s = std::getenv("JK_CLUSTER_EXCHANGE");
  if (s == nullptr || (s[0] != '0' && s[0] != '1') || s[1] != '\0') return kClusterExchangeDefault;
  return s[0] == '1';
}

template <typename V, int kMaxRanks = 8>
struct ClusterExchange {
  static_assert(sizeof(V) == 8 || sizeof(V) == 16, "float2 or float4");
  V slot[2][kMaxRanks];  // [row parity][sender rank]
  uint64_t bar[2];       // [row parity]

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // Every thread of every CTA, before the first Publish: the barriers initialised and visible cluster-wide.
  __device__ __forceinline__ void Init() {
    if (threadIdx.x == 0) {
      BarrierInit(&bar[0]);
      BarrierInit(&bar[1]);
      BarrierInitFence();
    }
    cooperative_groups::this_cluster().sync();
  }

  // Thread 0 only: `v` into slot[parity][rank] of this CTA (a plain store, released to this CTA's threads by the
  // arrival) and of every other CTA, and this CTA's barrier armed for the peers' values. After Wait, every slot
  // [parity][0, ranks) holds its rank's value, so the readers need not keep their own value live.
  __device__ __forceinline__ void Publish(int parity, const V& v, unsigned rank, unsigned ranks) {
    const uint32_t local_bar = SmemAddress(&bar[parity]), local_slot = SmemAddress(&slot[parity][rank]);
    slot[parity][rank] = v;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(local_bar),
                 "r"(static_cast<uint32_t>((ranks - 1) * sizeof(V)))
                 : "memory");
    for (unsigned k = 0; k < ranks; ++k) {
      if (k == rank) continue;
      const uint32_t rslot = ClusterSmemAddress(local_slot, k), rbar = ClusterSmemAddress(local_bar, k);
      if constexpr (sizeof(V) == 8) {
        const float2 f = *reinterpret_cast<const float2*>(&v);
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];\n" ::"r"(rslot),
                     "f"(f.x), "f"(f.y), "r"(rbar)
                     : "memory");
      } else {
        const float4 f = *reinterpret_cast<const float4*>(&v);
        asm volatile(
            "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(rslot),
            "f"(f.x), "f"(f.y), "f"(f.z), "f"(f.w), "r"(rbar)
            : "memory");
      }
    }
  }

  // Every thread: until the peers' values of this parity's `use`-th row have landed (acquire at cluster scope,
  // pairing with the peers' complete_tx).
  __device__ __forceinline__ void Wait(int parity, uint32_t use) { ClusterWait(&bar[parity], use & 1u); }
#endif
};

}  // namespace jk
