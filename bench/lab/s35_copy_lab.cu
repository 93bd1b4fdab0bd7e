// Session 35: where our copies lose 4-7 points of the ceiling to XLA's x * c at 67 / 134 MB moved (issue 5's int8
// 8192^2 and attention permute sit at 88-89%). Outside JAX, one process, cudaEvents:
//   xc        a clone of XLA's loop_multiply_fusion (Nsight Compute, session 35 call 1: 128 threads, one 16-byte
//             access a thread, one CTA per 2 KB, 16 registers)
//   lin TxU   a linear copy, T threads x U 16-byte accesses a thread strided by T (RowCopy's shape, no index math)
//   rowcopy / permute / int8: the production LaunchTranspose on the benchmark's plans
//   memcpy    cudaMemcpyAsync device to device
// Session 35 call 3 added occupancy caps on lin (dynamic shared memory, "[k/SM]" the CTAs an SM then), a grid-stride
// xc, and the launcher's lab knobs (JK_TRANSPOSE_TIERS) on our cases; CASES=67,134,perm,int8,fast picks groups
// (fast: call 4, default 67,134,perm,int8).
// Two modes, each the median of 21 timed calls after 3 warm-ups, every call writing the next of 8 output buffers (the
// benchmark keeps every output alive, so each call writes fresh memory while the previous output's dirty lines sit
// in L2):
//   alone  a ~30 us spin kernel first, then event, launch, event, all queued behind it: the launch runs on an idle
//          GPU with no host gap inside the events (the benchmark's CUPTI calls also run alone)
//   b2b    21 launches queued back to back between two events, the mean
// % is of xc over a 1 GiB input (alone) as in the benchmark's ceiling.
//
//   nvcc -O3 -DNDEBUG -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -Icuda -Ibench/lab bench/lab/s35_copy_lab.cu \
//     cuda/transpose/transpose_launch.cu cuda/common/sm90.cu -o /tmp/copylab && /tmp/copylab
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lab_common.cuh"  // CHECK
#include "transpose/transpose_launch.h"
#include "transpose/transpose_plan.h"

namespace {

__global__ void Spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void __launch_bounds__(128) XcClone(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4,
                                               float c) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * 128 + threadIdx.x;
  if (i < n4) {
    float4 v = x[i];
    v.x *= c, v.y *= c, v.z *= c, v.w *= c;
    y[i] = v;
  }
}

template <int T, int U>
__global__ void __launch_bounds__(T) Lin(const uint4* __restrict__ x, uint4* __restrict__ y, int64_t n) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * T * U + threadIdx.x;
  uint4 v[U];
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (base + u * T < n) v[u] = x[base + u * T];
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (base + u * T < n) y[base + u * T] = v[u];
}

constexpr int kOuts = 8;

struct Case {
  std::string name;
  size_t in_bytes;  // = out bytes
  std::function<cudaError_t(const void*, void*)> launch;
  std::function<cudaError_t(const void*, void*)> ref;  // call 4: the production launch whose bytes it must equal
};

// per_sm > 0: dynamic shared memory (unused) that leaves at most per_sm CTAs an SM (checked with the occupancy API).
template <int T, int U>
Case LinCase(const char* name, size_t bytes, int per_sm = 0) {
  int smem = 0;
  if (per_sm > 0) {
    int dev_smem = 0;
    CHECK(cudaDeviceGetAttribute(&dev_smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
    smem = dev_smem / per_sm - 1024 - 16;  // 1 KB a CTA reserved by the system
    CHECK(cudaFuncSetAttribute(Lin<T, U>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  }
  int got = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&got, Lin<T, U>, T, smem));
  const std::string full = std::string(name) + " [" + std::to_string(got) + "/SM]";
  return {full, bytes, [bytes, smem](const void* x, void* y) {
            const int64_t n = bytes / 16;
            Lin<T, U><<<(n + T * U - 1) / (T * U), T, smem>>>(static_cast<const uint4*>(x), static_cast<uint4*>(y), n);
            return cudaGetLastError();
          }};
}

// A grid-stride x * c on a resident grid (per_sm CTAs of 128 an SM).
__global__ void __launch_bounds__(128) XcStride(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4,
                                                float c) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * 128 + threadIdx.x; i < n4; i += int64_t{gridDim.x} * 128) {
    float4 v = x[i];
    v.x *= c, v.y *= c, v.z *= c, v.w *= c;
    y[i] = v;
  }
}
Case XcStrideCase(const char* name, size_t bytes, int per_sm) {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  return {name, bytes, [bytes, sms, per_sm](const void* x, void* y) {
            XcStride<<<sms * per_sm, 128>>>(static_cast<const float4*>(x), static_cast<float4*>(y), bytes / 16, 1.0001f);
            return cudaGetLastError();
          }};
}

Case XcCase(const char* name, size_t bytes) {
  return {name, bytes, [bytes](const void* x, void* y) {
            const int64_t n4 = bytes / 16;
            XcClone<<<(n4 + 127) / 128, 128>>>(static_cast<const float4*>(x), static_cast<float4*>(y), n4, 1.0001f);
            return cudaGetLastError();
          }};
}

// knobs: JK_TRANSPOSE_TIERS while this case runs (the launcher re-reads it at every launch).
Case PlanCase(const char* name, std::vector<int64_t> dims, std::vector<int64_t> perm, int elem,
              const char* knobs = "") {
  size_t bytes = elem;
  for (int64_t d : dims) bytes *= d;
  auto plan = std::make_shared<jk::TransposePlan>();
  if (!jk::PlanTranspose(dims.data(), perm.data(), static_cast<int>(dims.size()), elem, 16, plan.get())) {
    std::printf("plan failed: %s\n", name);
    std::exit(1);
  }
  const std::string k = knobs;
  return {std::string(name) + (k.empty() ? "" : " " + k), bytes, [plan, k](const void* x, void* y) {
            setenv("JK_TRANSPOSE_TIERS", k.c_str(), 1);
            return jk::LaunchTranspose(nullptr, *plan, x, y);
          }};
}

Case MemcpyCase(const char* name, size_t bytes) {
  return {name, bytes, [bytes](const void* x, void* y) { return cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice); }};
}

struct Buffers {
  void* x = nullptr;
  std::vector<void*> y;
  size_t bytes = 0;
  void Ensure(size_t b) {
    if (b <= bytes) return;
    if (x) CHECK(cudaFree(x));
    for (void* p : y) CHECK(cudaFree(p));
    y.assign(kOuts, nullptr);
    CHECK(cudaMalloc(&x, b));
    for (void*& p : y) CHECK(cudaMalloc(&p, b));
    // Random-ish non-zero input.
    std::vector<uint32_t> h(b / 4);
    uint32_t s = 12345;
    for (auto& v : h) v = (s = s * 1664525u + 1013904223u) | 0x3c000000u;
    CHECK(cudaMemcpy(x, h.data(), b, cudaMemcpyHostToDevice));
    bytes = b;
  }
};

// ---- call 4: a row copy with cheap index math (multiply-high division, host-computed magic numbers) ----------------
// q = (n * M) >> (32 + s), M = floor(2^(32+s) / d) + 1, s = ceil(log2 d): exact for n, d < 2^31 (n * (M d - 2^(32+s))
// < 2^31 * d <= 2^(31+s)).
struct Magic {
  uint64_t m = 1;
  int shift = 0;  // 32 + s
  uint32_t d = 1;
};
Magic MakeMagic(uint32_t d) {
  int s = 0;
  while ((uint64_t{1} << s) < d) ++s;
  Magic g;
  g.d = d;
  g.shift = 32 + s;
  g.m = static_cast<uint64_t>((static_cast<unsigned __int128>(1) << (32 + s)) / d) + 1;
  return g;
}
__device__ __forceinline__ uint32_t Div(uint32_t n, const Magic& g) {
  return static_cast<uint32_t>((static_cast<uint64_t>(n) * g.m) >> g.shift);
}
struct FastRowArgs {
  const unsigned char* x;
  uint4* y;
  uint32_t total;  // 16-byte accesses
  Magic run;       // accesses a run
  int n;           // row axes (innermost first), at most 4
  Magic dim[4];
  int64_t in[4];   // bytes
};
template <int T, int U>
__global__ void __launch_bounds__(T) RowFast(const __grid_constant__ FastRowArgs p) {
  const uint32_t base = blockIdx.x * (T * U) + threadIdx.x;
  uint4 v[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const uint32_t g = base + u * T;
    if (g < p.total) {
      uint32_t row = Div(g, p.run);
      const uint32_t col = g - row * p.run.d;
      int64_t at = int64_t{col} * 16;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        if (k < p.n) {
          const uint32_t q = Div(row, p.dim[k]);
          at += int64_t{row - q * p.dim[k].d} * p.in[k];
          row = q;
        }
      }
      v[u] = *reinterpret_cast<const uint4*>(p.x + at);
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (base + u * T < p.total) p.y[base + u * T] = v[u];
}
// The attention permute (32, 128, 64, 64) bf16 (0, 2, 1, 3) with its sizes as shifts: the least index math possible.
template <int T>
__global__ void __launch_bounds__(T) PermuteShift(const uint4* __restrict__ x, uint4* __restrict__ y) {
  const uint32_t g = blockIdx.x * T + threadIdx.x;  // output access: ((b * 64 + s) * 128 + h) * 8 + c
  const uint32_t c = g & 7, h = (g >> 3) & 127, sq = (g >> 10) & 63, b = g >> 16;
  y[g] = x[(((b * 128 + h) * 64 + sq) << 3) + c];
}

template <int T, int U>
Case FastCase(const char* name, std::vector<int64_t> dims, std::vector<int64_t> perm, int elem) {
  size_t bytes = elem;
  for (int64_t d : dims) bytes *= d;
  jk::TransposePlan plan;
  if (!jk::PlanTranspose(dims.data(), perm.data(), static_cast<int>(dims.size()), elem, 16, &plan) ||
      plan.kind != jk::TransposePlan::kRowCopy || plan.row * plan.elem_bytes % 16 != 0 || plan.rows.n > 4) {
    std::printf("fast plan unsupported: %s\n", name);
    std::exit(1);
  }
  FastRowArgs a{};
  a.total = static_cast<uint32_t>(bytes / 16);
  a.run = MakeMagic(static_cast<uint32_t>(plan.row * plan.elem_bytes / 16));
  a.n = plan.rows.n;
  for (int k = 0; k < a.n; ++k) {
    a.dim[k] = MakeMagic(static_cast<uint32_t>(plan.rows.dim[k]));
    a.in[k] = plan.rows.in[k] * plan.elem_bytes;
  }
  return {std::string(name) + " fast " + std::to_string(T) + "x" + std::to_string(U), bytes, [a](const void* x, void* y) {
            FastRowArgs b = a;
            b.x = static_cast<const unsigned char*>(x);
            b.y = static_cast<uint4*>(y);
            RowFast<T, U><<<(b.total + T * U - 1) / (T * U), T>>>(b);
            return cudaGetLastError();
          }};
}
template <int T>
Case PermuteShiftCase() {
  const size_t bytes = size_t{32} * 128 * 64 * 64 * 2;
  return {"permute shifts " + std::to_string(T) + "x1", bytes, [bytes](const void* x, void* y) {
            PermuteShift<T><<<bytes / 16 / T, T>>>(static_cast<const uint4*>(x), static_cast<uint4*>(y));
            return cudaGetLastError();
          }};
}

// us per call: alone (median, each behind a spin kernel) and back to back (mean).
std::pair<float, float> Time(const Case& c, Buffers& buf, long long spin_cycles) {
  int k = 0;
  auto launch = [&] { return c.launch(buf.x, buf.y[k++ % kOuts]); };
  const float alone = lab::TimeMedianAfter(launch, [&] { Spin<<<1, 1>>>(spin_cycles); }, 21);
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  Spin<<<1, 1>>>(spin_cycles);
  CHECK(cudaEventRecord(e0));
  for (int i = 0; i < 21; ++i) CHECK(launch());
  CHECK(cudaEventRecord(e1));
  CHECK(cudaEventSynchronize(e1));
  float ms;
  CHECK(cudaEventElapsedTime(&ms, e0, e1));
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  return {alone, ms * 1000.f / 21};
}

}  // namespace

#ifndef S35_NO_MAIN  // s35_jaxbuf_lab.cu builds these kernels into a library without it
int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const long long spin = static_cast<long long>(clock_khz) * 30 / 1000;  // ~30 us
  Buffers buf;
  const size_t m67 = size_t{32} * 128 * 64 * 64 * 2, m134 = 2 * m67;  // input bytes (moved: twice)
  const int64_t r67 = static_cast<int64_t>(m67 / 16), r134 = static_cast<int64_t>(m134 / 16);
  // CASES=67,134,perm,int8 (default all): which groups run.
  const std::string want = std::getenv("CASES") ? std::getenv("CASES") : "67,134,perm,int8";
  auto on = [&](const char* g) { return ("," + want + ",").find(std::string(",") + g + ",") != std::string::npos; };
  std::vector<Case> cases = {XcCase("xc 1 GiB (ceiling)", size_t{1} << 30)};
  if (on("67")) {
    cases.push_back(XcCase("xc 67 MB", m67));
    cases.push_back(MemcpyCase("memcpy 67 MB", m67));
    cases.push_back(XcStrideCase("xc stride 67 MB 16/SM", m67, 16));
    cases.push_back(XcStrideCase("xc stride 67 MB 8/SM", m67, 8));
    cases.push_back(LinCase<128, 1>("lin 128x1 67 MB", m67));
    cases.push_back(LinCase<128, 1>("lin 128x1 67 MB", m67, 8));
    cases.push_back(LinCase<128, 2>("lin 128x2 67 MB", m67));
    cases.push_back(LinCase<128, 2>("lin 128x2 67 MB", m67, 8));
    cases.push_back(LinCase<256, 2>("lin 256x2 67 MB", m67));
    cases.push_back(LinCase<256, 2>("lin 256x2 67 MB", m67, 4));
    cases.push_back(LinCase<256, 4>("lin 256x4 67 MB", m67));
    cases.push_back(LinCase<256, 4>("lin 256x4 67 MB", m67, 2));
    for (const char* k : {"", "rc128x2", "rc256x4"})
      cases.push_back(PlanCase("rowcopy (2,2,n) f32 (1,0,2) 67 MB", {2, 2, r67}, {1, 0, 2}, 4, k));
  }
  if (on("perm")) {
    for (const char* k : {"", "norowtile", "norowtile,rc128x2", "rowtile4k", "rowtile16k", "rowtilep"})
      cases.push_back(PlanCase("permute (32,128,64,64) bf16 (0,2,1,3)", {32, 128, 64, 64}, {0, 2, 1, 3}, 2, k));
  }
  if (on("134")) {
    cases.push_back(XcCase("xc 134 MB", m134));
    cases.push_back(LinCase<128, 1>("lin 128x1 134 MB", m134));
    cases.push_back(LinCase<128, 2>("lin 128x2 134 MB", m134));
    cases.push_back(LinCase<128, 2>("lin 128x2 134 MB", m134, 8));
    cases.push_back(LinCase<256, 2>("lin 256x2 134 MB", m134));
    cases.push_back(LinCase<256, 2>("lin 256x2 134 MB", m134, 4));
    for (const char* k : {"", "rc128x2"})
      cases.push_back(PlanCase("rowcopy (2,2,n) f32 (1,0,2) 134 MB", {2, 2, r134}, {1, 0, 2}, 4, k));
  }
  if (on("fast")) {  // call 4
    const std::vector<int64_t> pd = {32, 128, 64, 64}, pp = {0, 2, 1, 3};
    const Case prod = PlanCase("permute (32,128,64,64) bf16 (0,2,1,3)", pd, pp, 2);
    cases.push_back(XcCase("xc 67 MB", m67));
    cases.push_back(prod);
    cases.push_back(PlanCase("permute (32,128,64,64) bf16 (0,2,1,3)", pd, pp, 2, "norowtile"));
    for (Case c : {PermuteShiftCase<128>(), PermuteShiftCase<256>(), FastCase<128, 1>("permute", pd, pp, 2),
                   FastCase<128, 2>("permute", pd, pp, 2), FastCase<256, 1>("permute", pd, pp, 2),
                   FastCase<256, 2>("permute", pd, pp, 2)}) {
      c.ref = prod.launch;
      cases.push_back(c);
    }
    const std::vector<int64_t> rd = {2, 2, r67}, rp = {1, 0, 2};
    const Case rprod = PlanCase("rowcopy (2,2,n) f32 (1,0,2) 67 MB", rd, rp, 4);
    cases.push_back(rprod);
    for (Case c : {FastCase<128, 1>("rowcopy 67 MB", rd, rp, 4), FastCase<128, 2>("rowcopy 67 MB", rd, rp, 4),
                   FastCase<256, 2>("rowcopy 67 MB", rd, rp, 4)}) {
      c.ref = rprod.launch;
      cases.push_back(c);
    }
    cases.push_back(XcCase("xc 134 MB", m134));
    const std::vector<int64_t> rd2 = {2, 2, r134};
    const Case rprod2 = PlanCase("rowcopy (2,2,n) f32 (1,0,2) 134 MB", rd2, rp, 4);
    cases.push_back(rprod2);
    for (Case c : {FastCase<128, 1>("rowcopy 134 MB", rd2, rp, 4), FastCase<128, 2>("rowcopy 134 MB", rd2, rp, 4)}) {
      c.ref = rprod2.launch;
      cases.push_back(c);
    }
  }
  if (on("int8")) {
    // Call 6 added "smallcta" (kTiledSmallCta: 64x64 tiles of 128 threads, 4 KB a CTA) and "reg" (register blocks).
    for (const char* k : {"", "compact", "s3", "old", "smallcta", "reg"})
      cases.push_back(PlanCase("int8 8192^2 (1,0)", {8192, 8192}, {1, 0}, 1, k));
  }
  // The 1 GiB ceiling needs 9 GiB of buffers; the rest fit in the same ones.
  buf.Ensure(size_t{1} << 30);
  float ceiling_gbs = 0;
  std::printf("device: %s; us: alone = median of 21 calls each behind a spin kernel, b2b = mean of 21 queued; %% of "
              "the 1 GiB xc (alone)\n", prop.name);
  // Variants with a production reference: their output must equal its bytes.
  for (const Case& c : cases) {
    if (!c.ref) continue;
    CHECK(c.ref(buf.x, buf.y[0]));
    CHECK(c.launch(buf.x, buf.y[1]));
    std::vector<unsigned char> a(c.in_bytes), b(c.in_bytes);
    CHECK(cudaMemcpy(a.data(), buf.y[0], c.in_bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(b.data(), buf.y[1], c.in_bytes, cudaMemcpyDeviceToHost));
    std::printf("check %-44s %s\n", c.name.c_str(), a == b ? "ok (equal to the production launch)" : "MISMATCH");
  }
  for (int round = 0; round < 2; ++round) {
    for (const Case& c : cases) {
      const auto [alone, b2b] = Time(c, buf, spin);
      const double moved = 2.0 * c.in_bytes;
      if (ceiling_gbs == 0) ceiling_gbs = moved / alone / 1e3;
      std::printf("round %d  %-40s alone %8.2f us %6.1f%%   b2b %8.2f us %6.1f%%\n", round, c.name.c_str(), alone,
                  100.0 * moved / alone / 1e3 / ceiling_gbs, b2b, 100.0 * moved / b2b / 1e3 / ceiling_gbs);
    }
  }
  std::printf("ceiling %.0f GB/s\n", ceiling_gbs);
  return 0;
}
#endif  // S35_NO_MAIN
