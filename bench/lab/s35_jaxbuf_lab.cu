// Session 35: s35_copy_lab.cu's kernels as a shared library (extern "C"), so a Python script can time them with the
// same cudaEvents on buffers JAX allocated (pointers from jax.Array.unsafe_buffer_pointer) and on the library's own
// cudaMalloc buffers, in one process: is the 4-5% that our copies lose to XLA's kernels in JAX (call 11) a property of
// JAX's buffers? bench/lab/s35_jaxbuf_lab.py drives it.
//
//   nvcc -O3 -DNDEBUG -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icuda -Ibench/lab -shared -Xcompiler -fPIC \
//     bench/lab/s35_jaxbuf_lab.cu cuda/transpose/transpose_launch.cu cuda/common/sm90.cu -o /tmp/s35jaxbuf.so
#define S35_NO_MAIN
#include "s35_copy_lab.cu"

namespace {

constexpr size_t kBytes = size_t{32} * 128 * 64 * 64 * 2;  // 33.5 MB in, 33.5 MB out (67 MB moved)

std::vector<Case>& Cases() {
  static std::vector<Case> cases = [] {
    const int64_t r = static_cast<int64_t>(kBytes / 16);
    const std::vector<int64_t> pd = {32, 128, 64, 64}, pp = {0, 2, 1, 3}, rd = {2, 2, r}, rp = {1, 0, 2};
    std::vector<Case> v;
    v.push_back(XcCase("xc clone 67 MB", kBytes));
    v.push_back(MemcpyCase("memcpy 67 MB", kBytes));
    v.push_back(LinCase<128, 1>("lin 128x1 67 MB", kBytes));
    v.push_back(LinCase<256, 2>("lin 256x2 67 MB", kBytes));
    v.push_back(PlanCase("rowcopy (2,2,n) f32 (1,0,2)", rd, rp, 4));  // the production launcher (128 x 1, divisors)
    v.push_back(PlanCase("rowcopy (2,2,n) f32 (1,0,2)", rd, rp, 4, "rc256x2"));
    v.push_back(PlanCase("permute (32,128,64,64) bf16 (0,2,1,3)", pd, pp, 2));
    v.push_back(PlanCase("permute (32,128,64,64) bf16 (0,2,1,3)", pd, pp, 2, "norowtile"));
    v.push_back(PlanCase("permute (32,128,64,64) bf16 (0,2,1,3)", pd, pp, 2, "norowtile,rcout"));
    v.push_back(PermuteShiftCase<128>());
    return v;
  }();
  return cases;
}

long long SpinCycles() {
  int khz = 0;
  CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  return static_cast<long long>(khz) * 30 / 1000;  // ~30 us
}

}  // namespace

extern "C" {
int s35_cases() { return static_cast<int>(Cases().size()); }
const char* s35_name(int i) { return Cases()[i].name.c_str(); }
size_t s35_bytes() { return kBytes; }
// Case i reading x and writing ys[0..7] in turn: alone (median of 21, each behind a spin kernel) and back to back
// (mean of 21), us.
void s35_time(int i, const void* x, void* const* ys, float* alone, float* b2b) {
  Buffers b;
  b.x = const_cast<void*>(x);
  b.y.assign(ys, ys + kOuts);
  b.bytes = kBytes;
  const auto t = Time(Cases()[i], b, SpinCycles());
  *alone = t.first, *b2b = t.second;
  b.x = nullptr;
  b.y.clear();  // JAX owns them
}
// The same on the library's own cudaMalloc buffers (allocated once).
void s35_time_own(int i, float* alone, float* b2b) {
  static Buffers own;
  own.Ensure(kBytes);
  const auto t = Time(Cases()[i], own, SpinCycles());
  *alone = t.first, *b2b = t.second;
}
}
