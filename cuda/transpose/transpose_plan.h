// The transpose planner: turns (dims, permutation, element size) into the cheapest of three kernels.
// Plain C++ (no CUDA, no XLA headers) so the CUDA launcher and the CPU implementation share it, and the
// CPU test-suite exercises exactly the plans the GPU runs.
//
//   1. drop size-1 axes, merge axes that stay adjacent (in order) in the output;
//   2. while the last axis is kept and short (2, 4 or 8 bytes together with the element), fold it into
//      a wider element: (1024, 1024, 2) float32 with (1, 0, 2) becomes an 8-byte 1024x1024 transpose;
//   3. classify: rank <= 1 after merging -> kCopy; last axis kept -> kRowCopy (contiguous runs of
//      `row` elements gathered from strided input rows, e.g. the attention permute (0, 2, 1, 3));
//      otherwise kTiled: tiles over group A (the input's innermost axes, contiguous in the input) and
//      group B (the output's innermost axes, contiguous in the output), every other axis a batch axis.
//      A group grows by the next-inner axis while it is shorter than kMinGroupBytes, so a permutation
//      such as (8, 16, 32, 64, 2) -> (4, 0, 3, 1, 2) still reads and writes long runs.
#pragma once
#include <cstdint>
#include <cstring>

namespace jk {

inline constexpr int kMaxTransposeRank = 16;  // after dropping size-1 axes and merging
inline constexpr int kMaxGroupAxes = 4;
inline constexpr int64_t kMinGroupBytes = 128;  // one 128-byte line per tile row

// Axes listed innermost first. A flat index i decomposes as idx0 = i % dim[0], i /= dim[0], ...;
// its element offset is sum(idx_k * in[k]) in the input and sum(idx_k * out[k]) in the output.
template <int N>
struct AxisList {
  int n = 0;
  int64_t dim[N] = {};
  int64_t in[N] = {};
  int64_t out[N] = {};
  int64_t Size() const {
    int64_t s = 1;
    for (int k = 0; k < n; ++k) s *= dim[k];
    return s;
  }
};

struct TransposePlan {
  enum Kind : int32_t { kEmpty, kCopy, kRowCopy, kTiled };
  Kind kind = kEmpty;
  int elem_bytes = 0;    // after widening: 1, 2, 4 or 8
  int64_t elements = 0;  // in units of elem_bytes
  // kRowCopy: output rows of `row` contiguous elements; `rows` are the other axes, output order.
  int64_t row = 0;
  AxisList<kMaxTransposeRank> rows;
  // kTiled: a_group is contiguous in the input (its `in` strides are implicit: flat index a), its
  // `out` strides place each tile column; b_group is contiguous in the output, its `in` strides place
  // each tile row. batch holds both strides of every remaining axis.
  AxisList<kMaxGroupAxes> a_group, b_group;
  AxisList<kMaxTransposeRank> batch;
};

// `perm[j]` is the input axis that becomes output axis j (jnp.transpose's convention). Returns false
// when the merged rank exceeds kMaxTransposeRank (the caller reports it). `max_elem_bytes` caps the
// widening of step 2 by the alignment of both buffers (the GPU loads whole widened elements).
inline bool PlanTranspose(const int64_t* dims, const int64_t* perm, int rank, int elem_bytes,
                          int max_elem_bytes, TransposePlan* plan) {
  *plan = TransposePlan{};
  int64_t total = 1;
  for (int i = 0; i < rank; ++i) total *= dims[i];
  plan->elem_bytes = elem_bytes;
  plan->elements = total;
  if (total == 0) return true;  // kEmpty
  if (rank > 64) return false;

  // 1. Keep non-1 axes; renumber them in input order.
  int newid[64];
  int64_t d[64];
  int r = 0;
  for (int i = 0; i < rank; ++i) newid[i] = dims[i] == 1 ? -1 : r, d[r] = dims[i], r += dims[i] != 1;
  int p[64], pr = 0;
  for (int j = 0; j < rank; ++j)
    if (newid[perm[j]] >= 0) p[pr++] = newid[perm[j]];
  // Merge: output neighbours (p[j], p[j+1]) with p[j+1] == p[j] + 1 are one axis. Mark each input axis
  // that continues its predecessor, then rebuild dims and perm over the surviving axes.
  bool cont[64] = {};
  for (int j = 0; j + 1 < r; ++j)
    if (p[j + 1] == p[j] + 1) cont[p[j + 1]] = true;
  int64_t md[64];
  int mid[64], m = 0;
  for (int i = 0; i < r; ++i) {
    if (cont[i]) {
      md[m - 1] *= d[i];
      mid[i] = m - 1;
    } else {
      md[m] = d[i];
      mid[i] = m++;
    }
  }
  int mp[64], mpn = 0;
  for (int j = 0; j < r; ++j)
    if (!cont[p[j]]) mp[mpn++] = mid[p[j]];

  // 2. Widen the element while the (merged) last axis stays last and is short.
  while (m >= 2 && mp[m - 1] == m - 1 && md[m - 1] * plan->elem_bytes <= max_elem_bytes &&
         ((md[m - 1] * plan->elem_bytes) & (md[m - 1] * plan->elem_bytes - 1)) == 0) {
    plan->elem_bytes = static_cast<int>(md[m - 1] * plan->elem_bytes);
    plan->elements /= md[m - 1];
    --m;  // mp[0..m) is still a permutation of 0..m): the dropped axis was last in both orders
  }
  if (m > kMaxTransposeRank) return false;

  // 3. Classify.
  if (m <= 1) {
    plan->kind = TransposePlan::kCopy;
    return true;
  }
  int64_t in_stride[64], out_stride[64];  // per input axis
  {
    int64_t s = 1;
    for (int i = m - 1; i >= 0; --i) in_stride[i] = s, s *= md[i];
    s = 1;
    for (int j = m - 1; j >= 0; --j) out_stride[mp[j]] = s, s *= md[mp[j]];
  }
  if (mp[m - 1] == m - 1) {
    plan->kind = TransposePlan::kRowCopy;
    plan->row = md[m - 1];
    for (int j = m - 2; j >= 0; --j) {
      auto& L = plan->rows;
      L.dim[L.n] = md[mp[j]], L.in[L.n] = in_stride[mp[j]], L.out[L.n] = out_stride[mp[j]], ++L.n;
    }
    return true;
  }
  plan->kind = TransposePlan::kTiled;
  bool used[64] = {};
  auto add = [&](AxisList<kMaxGroupAxes>& g, int axis) {
    g.dim[g.n] = md[axis], g.in[g.n] = in_stride[axis], g.out[g.n] = out_stride[axis], ++g.n;
    used[axis] = true;
  };
  add(plan->a_group, m - 1);
  add(plan->b_group, mp[m - 1]);
  const int64_t min_elems = (kMinGroupBytes + plan->elem_bytes - 1) / plan->elem_bytes;
  // A grows with the next-inner input axes, B with the next-inner output axes, while short and free.
  for (int i = m - 2; i >= 0 && plan->a_group.Size() < min_elems && plan->a_group.n < kMaxGroupAxes;
       --i) {
    if (used[i]) break;
    add(plan->a_group, i);
  }
  for (int j = m - 2; j >= 0 && plan->b_group.Size() < min_elems && plan->b_group.n < kMaxGroupAxes;
       --j) {
    if (used[mp[j]]) break;
    add(plan->b_group, mp[j]);
  }
  for (int i = m - 1; i >= 0; --i) {
    if (used[i]) continue;
    auto& L = plan->batch;
    L.dim[L.n] = md[i], L.in[L.n] = in_stride[i], L.out[L.n] = out_stride[i], ++L.n;
  }
  return true;
}

}  // namespace jk
