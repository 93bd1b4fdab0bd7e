// The block barrier of the CPU kernel emulators (kernel_emulator.cc, norm_emulator.cc): one host thread
// per CUDA thread meets here for __syncthreads and between blocks. Blocking, not spinning (spinning barriers
// with hundreds of threads on a few cores crawl): the arrivals count on an atomic, the waiters sleep on the
// generation (C++20 atomic wait, a futex on Linux). The last arrival resets the count before it publishes the
// new generation, so a thread released early cannot arrive at the next barrier on the old count. No mutex: a
// mutex + condition variable barrier wakes every waiter into the mutex again (the emulators ran about 3x slower on it).
// Memory: every arrival's writes are released through the count (acq_rel read-modify-writes) and the new
// generation, which the waiters acquire, as __syncthreads orders shared memory.
#pragma once
#include <atomic>

namespace jk_emu {
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void Wait() {
    const unsigned gen = gen_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      count_.store(0, std::memory_order_relaxed);
      gen_.fetch_add(1, std::memory_order_acq_rel);
      gen_.notify_all();
    } else {
      while (gen_.load(std::memory_order_acquire) == gen) gen_.wait(gen, std::memory_order_acquire);
    }
  }

 private:
  std::atomic<int> count_{0};
  std::atomic<unsigned> gen_{0};
  const int n_;
};
}  // namespace jk_emu
