// Lab (session 17): where the ping-pong warpgroups of the Hopper matmul tier wait, bf16 M x N x K.
// A standalone program: the launcher and kernel compiled into this one translation unit with the
// kernel's clock64 timeline on (JK_WGMMA_TRACE, matmul_wgmma.cuh), so it runs without JAX.
//   nvcc -std=c++17 -O3 -arch=sm_90a --expt-relaxed-constexpr -cudart static -I cuda \
//        bench/lab/s17_pp_trace.cu -o build/s17_pp_trace
//   build/s17_pp_trace [M N K]
// Per variant (environment knobs of the launcher + epilogue operands): cudaEvent time (median of 20 after
// 3 warm-up launches; a diagnostic, not a benchmark figure), then one traced launch summarised per tile:
// wait at the order barrier, mainloop issue span and length, epilogue length, and the share of each
// CTA's time with a mainloop in flight.
#define JK_WGMMA_TRACE 1
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lab_common.cuh"  // CHECK
#include "common/sm90.cu"
#include "matmul/matmul_wgmma_launch.cu"

using namespace jk;
using namespace jk::mm;

__global__ void FillRandom(__nv_bfloat16* x, int64_t n, uint32_t seed, float scale) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 16; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
    x[i] = __float2bfloat16(scale * (static_cast<float>(h) / 4294967296.f * 2.f - 1.f));
  }
}


struct Variant {
  const char* name;
  const char* sched;  // JK_MATMUL_WGMMA_SCHED
  const char* boxed;  // JK_MATMUL_WGMMA_BOXED
  bool bias, residual;
  Activation act;
  bool same_as_previous;  // outputs must equal the previous variant's bit for bit
  int lab_mode = 0, lab_n = 0;  // the kernel's lab probe after the plain epilogue (matmul_wgmma.cuh)
};

int main(int argc, char** argv) {
  const int64_t M = argc > 3 ? atoll(argv[1]) : 4096, N = argc > 3 ? atoll(argv[2]) : 4096,
                K = argc > 3 ? atoll(argv[3]) : 4096;
  __nv_bfloat16 *a, *b, *bias, *res, *out;
  CHECK(cudaMalloc(&a, M * K * 2));
  CHECK(cudaMalloc(&b, K * N * 2));
  CHECK(cudaMalloc(&bias, N * 2));
  CHECK(cudaMalloc(&res, M * N * 2));
  CHECK(cudaMalloc(&out, M * N * 2));
  FillRandom<<<1024, 256>>>(a, M * K, 1, 1.f);
  FillRandom<<<1024, 256>>>(b, K * N, 2, 1.f / 64.f);
  FillRandom<<<1024, 256>>>(bias, N, 3, 1.f);
  FillRandom<<<1024, 256>>>(res, M * N, 4, 1.f);
  CHECK(cudaDeviceSynchronize());

  const Variant variants[] = {
      {"plain coop", "coop", "1", false, false, Activation::kNone, false},
      {"plain pp", "pingpong", "1", false, false, Activation::kNone, false},
      {"bias pp old", "pingpong", "0", true, false, Activation::kNone, false},
      {"bias pp boxed", "pingpong", "1", true, false, Activation::kNone, true},
      {"bias gelu pp old", "pingpong", "0", true, false, Activation::kGelu, false},
      {"bias gelu pp boxed", "pingpong", "1", true, false, Activation::kGelu, true},
      {"b gelu res pp old", "pingpong", "0", true, true, Activation::kGelu, false},
      {"b gelu res pp boxed", "pingpong", "1", true, true, Activation::kGelu, true},
      {"res pp old", "pingpong", "0", false, true, Activation::kNone, false},
      {"res pp boxed", "pingpong", "1", false, true, Activation::kNone, true},
      {"b gelu res coop old", "coop", "0", true, true, Activation::kGelu, false},
      {"b gelu res coop boxed", "coop", "1", true, true, Activation::kGelu, true},
  };
  const Variant probes[] = {
      {"plain pp", "pingpong", "1", false, false, Activation::kNone, false},
      {"pp + sleep 8k", "pingpong", "1", false, false, Activation::kNone, false, 1, 8000},
      {"pp + sleep 16k", "pingpong", "1", false, false, Activation::kNone, false, 1, 16000},
      {"pp + 1024 ffma", "pingpong", "1", false, false, Activation::kNone, false, 2, 1024},
      {"pp + 2048 ffma", "pingpong", "1", false, false, Activation::kNone, false, 2, 2048},
      {"pp + 4096 ffma", "pingpong", "1", false, false, Activation::kNone, false, 2, 4096},
      {"coop + 2048 ffma", "coop", "1", false, false, Activation::kNone, false, 2, 2048},
      {"res pp boxed", "pingpong", "1", false, true, Activation::kNone, false},
      {"res pp boxed, no add", "pingpong", "1", false, true, Activation::kNone, false, 3, 0},
      {"bias gelu pp boxed", "pingpong", "1", true, false, Activation::kGelu, false},
      {"b gelu res pp boxed", "pingpong", "1", true, true, Activation::kGelu, false},
      {"b gelu res pp, no add", "pingpong", "1", true, true, Activation::kGelu, false, 3, 0},
  };
  const Variant residuals[] = {
      {"plain coop", "coop", "1", false, false, Activation::kNone, false},
      {"plain pp", "pingpong", "1", false, false, Activation::kNone, false},
      {"bias gelu pp", "pingpong", "1", true, false, Activation::kGelu, false},
      {"b gelu res pp", "pingpong", "1", true, true, Activation::kGelu, false},
  };
  const bool probe = getenv("PROBES") != nullptr, res_only = getenv("RESIDUALS") != nullptr;
  std::vector<uint16_t> prev(M * N), cur(M * N);
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  static long long host[kTraceCtas][2][kTraceTiles][kTracePoints];
  for (const Variant& v : res_only ? std::vector<Variant>(std::begin(residuals), std::end(residuals))
                          : probe  ? std::vector<Variant>(std::begin(probes), std::end(probes))
                                   : std::vector<Variant>(std::begin(variants), std::end(variants))) {
    CHECK(cudaMemcpyToSymbol(jk_lab_mode, &v.lab_mode, sizeof(int)));
    CHECK(cudaMemcpyToSymbol(jk_lab_n, &v.lab_n, sizeof(int)));
    setenv("JK_MATMUL_WGMMA_SCHED", v.sched, 1);
    setenv("JK_MATMUL_WGMMA_BOXED", v.boxed, 1);
    MatmulProblem p;
    p.dtype = DType::kBF16;
    p.m = M, p.n = N, p.k = K;
    p.a = a, p.b = b, p.out = out;
    p.bias = v.bias ? bias : nullptr;
    p.residual = v.residual ? res : nullptr;
    p.res_row_stride = N, p.res_col_stride = 1;
    p.activation = v.act;
    p.a_end = a + M * K, p.b_end = b + K * N;
    CHECK(cudaMemset(out, 0xFF, M * N * 2));
    std::vector<float> ms;
    for (int i = 0; i < 23; ++i) {
      CHECK(cudaEventRecord(e0));
      CHECK(LaunchWgmmaTma(nullptr, p));
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, e0, e1));
      if (i >= 3) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double us = 1e3 * ms[ms.size() / 2];
    // One traced launch.
    void* sym = nullptr;
    CHECK(cudaGetSymbolAddress(&sym, jk_wgmma_trace));
    CHECK(cudaMemset(sym, 0, sizeof(host)));
    CHECK(LaunchWgmmaTma(nullptr, p));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(host, sym, sizeof(host), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(cur.data(), out, M * N * 2, cudaMemcpyDeviceToHost));
    int64_t diff = 0, far = 0;
    if (v.same_as_previous)
      for (int64_t i = 0; i < M * N; ++i) {
        diff += cur[i] != prev[i];
        // More than one bf16 step apart (the bias folded into the accumulators rounds differently): the bit
        // patterns of same-sign bf16 values are ordered.
        const int a = cur[i], b = prev[i];
        far += ((a ^ b) & 0x8000) ? (a & 0x7FFF) + (b & 0x7FFF) > 1 : std::abs(a - b) > 1;
      }
    uint64_t hash = 1469598103934665603ull;  // FNV-1a over the output bits: equal across builds = same outputs
    for (int64_t i = 0; i < M * N; ++i) hash = (hash ^ cur[i]) * 1099511628211ull;
    std::printf("  output hash %016llx\n", static_cast<unsigned long long>(hash));
    std::swap(prev, cur);
    // Per tile (first tile of each warpgroup and the CTA's last tile apart): wait = p1 - p0, issue = p2 - p1,
    // ml = p3 - p1, epi = p4 - p3, all in SM cycles; busy = the union of [p1, p3] over the CTA's tiles
    // divided by (last p4 - first p1).
    double s_wait = 0, s_issue = 0, s_ml = 0, s_epi = 0, n_mid = 0, s_busy = 0, s_span = 0, n_cta = 0;
    double s_ml_first = 0, n_first = 0, s_gap = 0, n_gap = 0, n_events = 0;
    for (int c = 0; c < kTraceCtas; ++c) {
      struct Ev { long long p[kTracePoints]; int w, n; };
      std::vector<Ev> ev;
      for (int w = 0; w < 2; ++w)
        for (int n = 0; n < kTraceTiles; ++n)
          if (host[c][w][n][4] != 0) {
            Ev e{};
            for (int q = 0; q < kTracePoints; ++q) e.p[q] = host[c][w][n][q];
            e.w = w, e.n = n;
            ev.push_back(e);
          }
      if (ev.empty()) continue;
      std::sort(ev.begin(), ev.end(), [](const Ev& x, const Ev& y) { return x.p[1] < y.p[1]; });
      const long long t0 = ev.front().p[1];
      long long t1 = 0, busy = 0, cover = t0;
      for (size_t i = 0; i < ev.size(); ++i) {
        const Ev& e = ev[i];
        t1 = std::max(t1, e.p[4]);
        const long long s = std::max(cover, e.p[1]);
        if (e.p[3] > s) busy += e.p[3] - s;
        cover = std::max(cover, e.p[3]);
        if (i + 1 < ev.size()) s_gap += ev[i + 1].p[1] - e.p[2], n_gap += 1;
        if (i < 2) {
          s_ml_first += e.p[3] - e.p[1], n_first += 1;
        } else if (i + 1 < ev.size()) {
          s_wait += e.p[0] != 0 ? e.p[1] - e.p[0] : 0;  // p0 is stamped on the ping-pong schedule only
          s_issue += e.p[2] - e.p[1], s_ml += e.p[3] - e.p[1];
          s_epi += e.p[4] - e.p[3], n_mid += 1;
        }
      }
      s_busy += busy, s_span += t1 - t0, n_cta += 1, n_events += ev.size();
      if (c < 2 && getenv("TRACE_RAW")) {  // raw timeline of CTAs 0 and 1, cycles from the first mainloop start
        std::printf("  %s CTA %d (span %lld cyc):\n", v.name, c, t1 - t0);
        for (const Ev& e : ev)
          std::printf("    wg%d tile%-2d p0 %7lld p1 %7lld p2 %7lld p3 %7lld p4 %7lld\n", e.w, e.n, e.p[0] ? e.p[0] - t0 : -1,
                      e.p[1] - t0, e.p[2] - t0, e.p[3] - t0, e.p[4] - t0);
      }
    }
    const auto avg = [](double s, double n) { return n > 0 ? s / n : 0.0; };
    if (v.same_as_previous)
      std::printf("  outputs differing from the previous variant's: %lld of %lld, by more than one bf16 step: %lld\n",
                  static_cast<long long>(diff), static_cast<long long>(M * N), static_cast<long long>(far));
    std::printf("%-22s %8.1f us | wg-tiles/CTA %4.1f | mid tiles: wait %6.0f issue %6.0f ml %6.0f epi %6.0f cyc | "
                "first two ml %6.0f | next-start minus issue-end %6.0f | mainloop busy %5.1f%%\n",
                v.name, us, avg(n_events, n_cta), avg(s_wait, n_mid), avg(s_issue, n_mid),
                avg(s_ml, n_mid), avg(s_epi, n_mid), avg(s_ml_first, n_first), avg(s_gap, n_gap),
                100.0 * avg(s_busy, s_span));
  }
  return 0;
}
