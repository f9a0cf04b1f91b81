// The one data-movement loop behind Slice, Transpose and similar views: gathers a strided view of
// a source buffer into a contiguous destination, for any element size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/thread_pool.h"

namespace edgefuse {

// Writes, in row-major order of `shape`,
//   dst[i_0, ..., i_n-1] = src[src_offset + sum_d i_d * src_strides[d]]
// with offsets and strides in elements (strides may be negative or zero). The caller guarantees
// every addressed source element is in bounds. Adjacent dims that are contiguous in the source are
// merged first, so a view whose last axis is contiguous copies whole rows with memcpy.
void copy_strided(const void* src, int64_t src_offset, std::span<const int64_t> shape,
                  std::span<const int64_t> src_strides, void* dst, size_t element_size, ThreadPool* pool);

// copy_strided's work for one view worked out once (its dims merged), so that a kernel copying
// the same view every frame (a Transpose) keeps it in its setup and copies without allocating.
class StridedCopy {
 public:
  StridedCopy(std::span<const int64_t> shape, std::span<const int64_t> src_strides, size_t element_size);
  void run(const void* src, int64_t src_offset, void* dst, ThreadPool* pool) const;

  struct Dim {
    int64_t size;
    int64_t stride;
  };

 private:
  std::vector<Dim> outer_;  // the merged dims but the last, outermost first
  Dim inner_{1, 1};         // the last merged dim
  bool empty_ = false;      // some dim is 0: nothing to copy
  size_t element_size_;
};

}  // namespace edgefuse
