// Lab (session 17): does compute-sanitizer's racecheck flag a correctly ordered shared-memory hand-over between two
// 256-thread groups of one CTA once each group has synchronised on its own named barrier? The exact float32 split
// kernel with two k groups (matmul_simt.cuh, to_red) drew such reports in sanitizer run 14: group 0 writes red[],
// a CTA-wide __syncthreads(), group 1 reads and adds. This program has the same shape and nothing else.
//   nvcc -std=c++17 -O3 -arch=sm_90a -lineinfo -cudart static bench/lab/s17_racecheck_repro.cu -o build/s17_race
//   compute-sanitizer --tool racecheck build/s17_race [mode]
// mode 0: groups loop on their own named barriers (bar.sync 1 + grp, 256), then the hand-over (the split kernel)
// mode 1: the same loop on __syncthreads() instead, then the hand-over
// mode 2: mode 0 in clusters of 2 with a cluster barrier at the end (as the split kernel in pairs)
// The program checks its outputs (exit 1 on a wrong value).
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

constexpr int kThreads = 512, kGroup = 256, kElems = 4096, kSteps = 8;

template <int kMode>
__global__ void __launch_bounds__(kThreads) HandOver(float* out) {
  __shared__ float buf[2][kGroup];
  __shared__ float red[kElems];
  const int grp = threadIdx.x / kGroup, tid = threadIdx.x % kGroup;
  float acc[kElems / kGroup];
  for (int i = 0; i < kElems / kGroup; ++i) acc[i] = 0.f;
  // Each group's own loop: write its buffer, sync, read a neighbour's slot, sync.
  for (int s = 0; s < kSteps; ++s) {
    buf[grp][tid] = static_cast<float>(s + tid + grp);
    if (kMode == 1) __syncthreads();
    else asm volatile("bar.sync %0, %1;\n" ::"r"(1 + grp), "n"(kGroup) : "memory");
    const float v = buf[grp][(tid + 1) % kGroup];
    for (int i = 0; i < kElems / kGroup; ++i) acc[i] += v;
    if (kMode == 1) __syncthreads();
    else asm volatile("bar.sync %0, %1;\n" ::"r"(1 + grp), "n"(kGroup) : "memory");
  }
  // The hand-over: group 0 writes, CTA barrier, group 1 adds.
  if (grp == 0)
    for (int i = 0; i < kElems / kGroup; ++i) red[tid + i * kGroup] = acc[i];
  __syncthreads();
  if (grp == 1)
    for (int i = 0; i < kElems / kGroup; ++i) red[tid + i * kGroup] += acc[i];
  __syncthreads();
  for (int e = threadIdx.x; e < kElems; e += kThreads) out[blockIdx.x * kElems + e] = red[e];
  if (kMode == 2) cooperative_groups::this_cluster().sync();
}

int main(int argc, char** argv) {
  const int mode = argc > 1 ? atoi(argv[1]) : 0, blocks = 4;
  float* out;
  cudaMalloc(&out, blocks * kElems * sizeof(float));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(kThreads);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 2, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = mode == 2 ? 1 : 0;
  cudaError_t e = mode == 0   ? cudaLaunchKernelEx(&cfg, HandOver<0>, out)
                  : mode == 1 ? cudaLaunchKernelEx(&cfg, HandOver<1>, out)
                              : cudaLaunchKernelEx(&cfg, HandOver<2>, out);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("mode %d: CUDA error %s\n", mode, cudaGetErrorString(e));
    return 2;
  }
  float* host = static_cast<float*>(std::malloc(blocks * kElems * sizeof(float)));
  cudaMemcpy(host, out, blocks * kElems * sizeof(float), cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int b = 0; b < blocks; ++b)
    for (int e2 = 0; e2 < kElems; ++e2) {
      const int tid = e2 % kGroup;
      float want = 0.f;  // both groups' sums of their neighbour's slot over the steps
      for (int grp = 0; grp < 2; ++grp)
        for (int s = 0; s < kSteps; ++s) want += static_cast<float>(s + (tid + 1) % kGroup + grp);
      wrong += host[b * kElems + e2] != want;
    }
  std::printf("mode %d: %d wrong of %d\n", mode, wrong, blocks * kElems);
  return wrong != 0;
}
