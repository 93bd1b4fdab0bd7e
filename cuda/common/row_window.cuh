// The window of a row of contiguous rows whose length is not a whole number of 16-byte packs: the aligned packs
// that overlap row `row` of rows of n elements (kP elements a pack), read with 16-byte loads although the row starts
// anywhere inside its first pack. The first and last packs are shared with the neighbouring rows: their elements
// outside the row take no part in the row's reductions and are not written. Device code only; the norms' and
// softmax's window tiers (norm_window.cuh, softmax_window.cuh).
#pragma once
#include <cstdint>

namespace jk {

template <int kP>
struct RowWindow {
  int64_t start;  // the row's first element
  int64_t first;  // its first pack, counted from the buffer's start
  int head;       // elements of the first pack before the row (0 .. kP - 1)
  int packs;      // packs of the window (the caller bounds them: 32-bit)
  int n;          // the row's length

  __device__ __forceinline__ RowWindow(int64_t row, int64_t cols)
      : start(row * cols), first(start / kP), head(static_cast<int>(start - first * kP)),
        packs(static_cast<int>((head + cols + kP - 1) / kP)), n(static_cast<int>(cols)) {}
  // The most packs a window of a row of `cols` elements spans (a row starting at a pack's last element): what the
  // launchers bound.
  static constexpr __host__ __device__ int64_t WidestPacks(int64_t cols) { return (kP - 1 + cols + kP - 1) / kP; }
  // The column of element e of window pack q, whether it is in the row, and whether all of pack q is.
  __device__ __forceinline__ int Col(int q, int e) const { return q * kP + e - head; }
  __device__ __forceinline__ bool InRow(int q, int e) const {
    const int c = Col(q, e);
    return q < packs && c >= 0 && c < n;
  }
  __device__ __forceinline__ bool Whole(int q) const {
    const int c = Col(q, 0);
    return c >= 0 && c + kP <= n;
  }
};

}  // namespace jk
