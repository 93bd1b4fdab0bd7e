// Session 39 lab: float32 2048x512 transposes compiled to PTX on the CPU machine and launched through
// bench/lab/s39_ptx_ffi.cc beside XLA's own kernel (bench/lab/s39_xla_ptx_lab.py), to find which of XLA's choices
// makes its kernel 0.1 us faster than ours. Shapes are compile-time constants in every kernel, XLA's included.
//   nvcc -ptx -arch=sm_90a -O3 -std=c++17 bench/lab/s39_transpose_ptx_lab.cu -o .dev/s39_transpose_lab.ptx
//
// kernel (grid x block)            what
// xla_clone (1024 x 128)           XLA's kernel in CUDA: a 32x33 float tile, 8 rows a thread, 4-byte accesses,
//                                  non-coherent loads, tile = ctaid & 15 along x's rows, ctaid >> 4 down them
// xla_plain (1024 x 128)           the same with plain (coherent) loads
// xla_grid ((16, 64) x 128)        the same on a 2-D grid
// xla_256 (1024 x 256)             the same tile, 256 threads of 4 rows
// xla_64rows (512 x 256)           64 rows x 32 columns of x a block, 256 threads of 8 rows
// reg_clone ((32, 16) x 128)       our register blocks (TiledRegisterBlocks<4, 4, 128>) with constant shapes
// call 3 (after call 2 put xla_grid at 2.10 us, reg_clone 2.14, ours and jnp 2.21, xla_clone 2.22):
// xla_gridb ((64, 16) x 128)       xla_grid with x the tile index down x's rows
// xla_grid64 ((16, 64) x 64)       xla_grid with 64 threads of 16 rows
// xla64_grid ((16, 32) x 256)      64 rows x 32 columns a block (xla_64rows) on a 2-D grid
// reg_b ((16, 32) x 128)           reg_clone with x the block index down x's rows
// xla_rt, reg_rt, reg_rt_check     xla_grid / reg_clone with the shape as parameters (rows, columns); reg_rt_check
//                                  with our kernel's early exit for blocks past the edge
// call 4 (call 3: xla_gridb 2.08, xla_grid 2.11, reg_clone / reg_b 2.14, xla64_grid 2.14, xla_grid64 2.18, reg_rt /
// reg_rt_check 2.18, xla_rt 2.19; ours 2.21, jnp 2.18, XLA's PTX 2.21), runtime shapes only:
// xla_rt_b ((64, 16) x 128)        xla_rt with x the tile index down x's rows
// reg_rt_b ((16, 32) x 128)        reg_rt with x the block index down x's rows
// reg_rt_bytes ((32, 16) x 128)    reg_rt given its strides in bytes (no scaling before the loads)
// xla_rt_bytes ((64, 16) x 128)    xla_rt_b given its strides in bytes
// reg_rt_ofs ((32, 16) x 128)      reg_rt with one 64-bit base and offsets added (not four products)
#include <cstdint>

namespace {
constexpr int kR = 2048, kC = 512;  // x is kR x kC, y is kC x kR
}

template <int kThreads, bool kNc, bool kGrid2, bool kGridB = false>
__device__ __forceinline__ void XlaTile(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float tile[32][33];
  constexpr int kStep = kThreads / 32, kRows = 32 / kStep;
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const int tc = kGridB ? blockIdx.y : kGrid2 ? blockIdx.x : (blockIdx.x & (kC / 32 - 1));
  const int tr = kGridB ? blockIdx.x : kGrid2 ? blockIdx.y : (blockIdx.x / (kC / 32));
  const float* src = x + (tr * 32 + ty) * kC + tc * 32 + tx;
#pragma unroll
  for (int i = 0; i < kRows; ++i) tile[tx][ty + kStep * i] = kNc ? __ldg(src + kStep * i * kC) : src[kStep * i * kC];
  __syncthreads();
  float* dst = y + (tc * 32 + ty) * kR + tr * 32 + tx;
#pragma unroll
  for (int i = 0; i < kRows; ++i) dst[kStep * i * kR] = tile[ty + kStep * i][tx];
}

extern "C" __global__ void __launch_bounds__(128) xla_clone(const float* __restrict__ x, float* __restrict__ y) {
  XlaTile<128, true, false>(x, y);
}
extern "C" __global__ void __launch_bounds__(128) xla_plain(const float* __restrict__ x, float* __restrict__ y) {
  XlaTile<128, false, false>(x, y);
}
extern "C" __global__ void __launch_bounds__(128) xla_grid(const float* __restrict__ x, float* __restrict__ y) {
  XlaTile<128, true, true>(x, y);
}
extern "C" __global__ void __launch_bounds__(256) xla_256(const float* __restrict__ x, float* __restrict__ y) {
  XlaTile<256, true, false>(x, y);
}

// 64 rows of x (32 columns) a block: two 32x33 tiles, 256 threads, 8 rows a thread each.
extern "C" __global__ void __launch_bounds__(256) xla_64rows(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float tile[32][65];
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;  // ty 0..7
  const int tc = blockIdx.x & (kC / 32 - 1), tr = blockIdx.x / (kC / 32);
  const float* src = x + (tr * 64 + ty) * kC + tc * 32 + tx;
#pragma unroll
  for (int i = 0; i < 8; ++i) tile[tx][ty + 8 * i] = __ldg(src + 8 * i * kC);
  __syncthreads();
  // y rows tc * 32 + r (r 0..31), 64 columns tr * 64 + c: a warp writes one row's 64 columns as two 32-lane halves.
  float* dst = y + (tc * 32) * kR + tr * 64;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int idx = i * 256 + threadIdx.x, r = idx >> 6, c = idx & 63;
    dst[r * kR + c] = tile[r][c];
  }
}

// Our register blocks with constant shapes: 4 lanes along x's rows (A), 8 along its columns (B), 4 warps along B; a
// thread loads a 4x4 block (4 rows of 16 bytes) and stores its transpose.
extern "C" __global__ void __launch_bounds__(128) reg_clone(const float* __restrict__ x, float* __restrict__ y) {
  const int a = blockIdx.x * 16 + (threadIdx.x % 4) * 4;   // column of x
  const int b = blockIdx.y * 128 + (threadIdx.x / 4) * 4;  // row of x
  uint4 w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) w[i] = __ldg(reinterpret_cast<const uint4*>(x + (b + i) * kC + a));
  const uint32_t o[4][4] = {{w[0].x, w[1].x, w[2].x, w[3].x},
                            {w[0].y, w[1].y, w[2].y, w[3].y},
                            {w[0].z, w[1].z, w[2].z, w[3].z},
                            {w[0].w, w[1].w, w[2].w, w[3].w}};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    *reinterpret_cast<uint4*>(y + (a + j) * kR + b) = make_uint4(o[j][0], o[j][1], o[j][2], o[j][3]);
  }
}

extern "C" __global__ void __launch_bounds__(128) xla_gridb(const float* __restrict__ x, float* __restrict__ y) {
  XlaTile<128, true, true, true>(x, y);
}
extern "C" __global__ void __launch_bounds__(64) xla_grid64(const float* __restrict__ x, float* __restrict__ y) {
  XlaTile<64, true, true>(x, y);
}

extern "C" __global__ void __launch_bounds__(256) xla64_grid(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float tile[32][65];
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;  // ty 0..7
  const int tc = blockIdx.x, tr = blockIdx.y;
  const float* src = x + (tr * 64 + ty) * kC + tc * 32 + tx;
#pragma unroll
  for (int i = 0; i < 8; ++i) tile[tx][ty + 8 * i] = __ldg(src + 8 * i * kC);
  __syncthreads();
  float* dst = y + (tc * 32) * kR + tr * 64;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int idx = i * 256 + threadIdx.x, r = idx >> 6, c = idx & 63;
    dst[r * kR + c] = tile[r][c];
  }
}

template <bool kGridB>
__device__ __forceinline__ void RegBlock(const float* __restrict__ x, float* __restrict__ y) {
  const int a = (kGridB ? blockIdx.y : blockIdx.x) * 16 + (threadIdx.x % 4) * 4;
  const int b = (kGridB ? blockIdx.x : blockIdx.y) * 128 + (threadIdx.x / 4) * 4;
  uint4 w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) w[i] = __ldg(reinterpret_cast<const uint4*>(x + (b + i) * kC + a));
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint32_t* c = &w[0].x + j;  // column j of the 4x4 block: word j of each row
    *reinterpret_cast<uint4*>(y + (a + j) * kR + b) = make_uint4(c[0], c[4], c[8], c[12]);
  }
}
extern "C" __global__ void __launch_bounds__(128) reg_b(const float* __restrict__ x, float* __restrict__ y) {
  RegBlock<true>(x, y);
}

// Runtime shapes: x is rows x cols, 32-bit offsets, every block wholly inside (the lab's shapes are multiples).
extern "C" __global__ void __launch_bounds__(128) xla_rt(const float* __restrict__ x, float* __restrict__ y,
                                                         uint32_t rows, uint32_t cols) {
  __shared__ float tile[32][33];
  const uint32_t tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const uint32_t a0 = blockIdx.x * 32, b0 = blockIdx.y * 32;
  const float* src = x + (b0 + ty) * cols + a0 + tx;
  const uint32_t step_in = 4 * cols;
#pragma unroll
  for (int i = 0; i < 8; ++i) tile[tx][ty + 4 * i] = __ldg(src + i * step_in);
  __syncthreads();
  float* dst = y + (a0 + ty) * rows + b0 + tx;
  const uint32_t step_out = 4 * rows;
#pragma unroll
  for (int i = 0; i < 8; ++i) dst[i * step_out] = tile[ty + 4 * i][tx];
}

template <bool kCheck>
__device__ __forceinline__ void RegBlockRt(const float* __restrict__ x, float* __restrict__ y, uint32_t rows,
                                           uint32_t cols) {
  const uint32_t a = blockIdx.x * 16 + (threadIdx.x % 4) * 4;
  const uint32_t b = blockIdx.y * 128 + (threadIdx.x / 4) * 4;
  if (kCheck && (a >= cols || b >= rows)) return;
  uint4 w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) w[i] = __ldg(reinterpret_cast<const uint4*>(x + (b + i) * cols + a));
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint32_t* c = &w[0].x + j;
    *reinterpret_cast<uint4*>(y + (a + j) * rows + b) = make_uint4(c[0], c[4], c[8], c[12]);
  }
}
extern "C" __global__ void __launch_bounds__(128) reg_rt(const float* __restrict__ x, float* __restrict__ y,
                                                         uint32_t rows, uint32_t cols) {
  RegBlockRt<false>(x, y, rows, cols);
}
extern "C" __global__ void __launch_bounds__(128) reg_rt_check(const float* __restrict__ x, float* __restrict__ y,
                                                               uint32_t rows, uint32_t cols) {
  RegBlockRt<true>(x, y, rows, cols);
}

template <bool kGridB>
__device__ __forceinline__ void XlaTileRt(const float* __restrict__ x, float* __restrict__ y, uint32_t rows,
                                          uint32_t cols) {
  __shared__ float tile[32][33];
  const uint32_t tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const uint32_t a0 = (kGridB ? blockIdx.y : blockIdx.x) * 32, b0 = (kGridB ? blockIdx.x : blockIdx.y) * 32;
  const float* src = x + (b0 + ty) * cols + a0 + tx;
#pragma unroll
  for (int i = 0; i < 8; ++i) tile[tx][ty + 4 * i] = __ldg(src + i * 4 * cols);
  __syncthreads();
  float* dst = y + (a0 + ty) * rows + b0 + tx;
#pragma unroll
  for (int i = 0; i < 8; ++i) dst[i * 4 * rows] = tile[ty + 4 * i][tx];
}
extern "C" __global__ void __launch_bounds__(128) xla_rt_b(const float* __restrict__ x, float* __restrict__ y,
                                                           uint32_t rows, uint32_t cols) {
  XlaTileRt<true>(x, y, rows, cols);
}
// Strides in bytes: in_row = cols * 4, out_row = rows * 4.
extern "C" __global__ void __launch_bounds__(128) xla_rt_bytes(const char* __restrict__ x, char* __restrict__ y,
                                                               uint32_t out_row, uint32_t in_row) {
  __shared__ float tile[32][33];
  const uint32_t tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  const uint32_t a0 = blockIdx.y * 32, b0 = blockIdx.x * 32;
  const char* src = x + (b0 + ty) * in_row + (a0 + tx) * 4;
#pragma unroll
  for (int i = 0; i < 8; ++i) tile[tx][ty + 4 * i] = __ldg(reinterpret_cast<const float*>(src + i * 4 * in_row));
  __syncthreads();
  char* dst = y + (a0 + ty) * out_row + (b0 + tx) * 4;
#pragma unroll
  for (int i = 0; i < 8; ++i) *reinterpret_cast<float*>(dst + i * 4 * out_row) = tile[ty + 4 * i][tx];
}
extern "C" __global__ void __launch_bounds__(128) reg_rt_b(const float* __restrict__ x, float* __restrict__ y,
                                                           uint32_t rows, uint32_t cols) {
  const uint32_t a = blockIdx.y * 16 + (threadIdx.x % 4) * 4;
  const uint32_t b = blockIdx.x * 128 + (threadIdx.x / 4) * 4;
  uint4 w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) w[i] = __ldg(reinterpret_cast<const uint4*>(x + (b + i) * cols + a));
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint32_t* c = &w[0].x + j;
    *reinterpret_cast<uint4*>(y + (a + j) * rows + b) = make_uint4(c[0], c[4], c[8], c[12]);
  }
}
extern "C" __global__ void __launch_bounds__(128) reg_rt_bytes(const char* __restrict__ x, char* __restrict__ y,
                                                               uint32_t out_row, uint32_t in_row) {
  const uint32_t a = blockIdx.x * 16 + (threadIdx.x % 4) * 4;
  const uint32_t b = blockIdx.y * 128 + (threadIdx.x / 4) * 4;
  const char* src = x + b * in_row + a * 4;
  uint4 w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) w[i] = __ldg(reinterpret_cast<const uint4*>(src + i * in_row));
  char* dst = y + a * out_row + b * 4;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint32_t* c = &w[0].x + j;
    *reinterpret_cast<uint4*>(dst + j * out_row) = make_uint4(c[0], c[4], c[8], c[12]);
  }
}
extern "C" __global__ void __launch_bounds__(128) reg_rt_ofs(const float* __restrict__ x, float* __restrict__ y,
                                                             uint32_t rows, uint32_t cols) {
  const uint32_t a = blockIdx.x * 16 + (threadIdx.x % 4) * 4;
  const uint32_t b = blockIdx.y * 128 + (threadIdx.x / 4) * 4;
  const float* src = x + (b * cols + a);
  uint4 w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    w[i] = __ldg(reinterpret_cast<const uint4*>(src));
    src += cols;
  }
  float* dst = y + (a * rows + b);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint32_t* c = &w[0].x + j;
    *reinterpret_cast<uint4*>(dst) = make_uint4(c[0], c[4], c[8], c[12]);
    dst += rows;
  }
}
