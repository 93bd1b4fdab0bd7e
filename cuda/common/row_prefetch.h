// How far ahead the persistent row tiers (softmax and norm kClusterRowsRegisters) prefetch their next rows into
// L2 (common/bulk_copy.cuh PrefetchL2): in rows of their own loop, 0 = not at all. Plain C++, host side.
#pragma once
#include <cstdlib>

namespace jk {

// The default, from the H200 lab (bench/lab/s10_h200.md).
inline constexpr int kRowPrefetchDefault = 0;

// Lab knob JK_ROW_PREFETCH = D (rows ahead, 0..2), re-read at every launch (XLA command buffers off) so one
// process can time each setting; unset or out of range: the default.
inline int RowPrefetchDistance() {
  const char* s = std::getenv("JK_ROW_PREFETCH");
  if (s == nullptr || s[0] < '0' || s[0] > '2' || s[1] != '\0') return kRowPrefetchDefault;
  return s[0] - '0';
}

}  // namespace jk
