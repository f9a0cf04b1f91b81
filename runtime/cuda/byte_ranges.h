// Whether two buffers share bytes, compared as addresses (they may be different allocations): a
// library call that writes its whole output before reading its inputs (cuBLAS, cuDNN) must not
// be given an input inside that output, as the memory planner's in-place steps may be.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgefuse::gpu {

inline bool byte_ranges_overlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto begin_a = reinterpret_cast<uintptr_t>(a), begin_b = reinterpret_cast<uintptr_t>(b);
  return begin_a < begin_b + b_bytes && begin_b < begin_a + a_bytes;
}

}  // namespace edgefuse::gpu
