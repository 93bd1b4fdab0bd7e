// The block barrier of the CPU kernel emulators (kernel_emulator.cc, norm_emulator.cc): one host thread
// per CUDA thread meets here for __syncthreads and between blocks. Blocking (mutex + condition variable):
// spinning barriers with hundreds of threads on a few cores crawl.
#pragma once
#include <condition_variable>
#include <mutex>

namespace jk_emu {
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void Wait() {
    std::unique_lock<std::mutex> l(m_);
    const long gen = gen_;
    if (++count_ == n_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(l, [&] { return gen_ != gen; });
    }
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_, count_ = 0;
  long gen_ = 0;
};
}  // namespace jk_emu
