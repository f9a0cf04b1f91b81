// The one data-movement loop behind Slice, Transpose and similar views: gathers a strided view of
// a source buffer into a contiguous destination, for any element size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "runtime/thread_pool.h"

namespace edgefuse {

// Writes, in row-major order of `shape`,
//   dst[i_0, ..., i_n-1] = src[src_offset + sum_d i_d * src_strides[d]]
// with offsets and strides in elements (strides may be negative or zero). The caller guarantees
// every addressed source element is in bounds. Adjacent dims that are contiguous in the source are
// merged first, so a view whose last axis is contiguous copies whole rows with memcpy.
void copy_strided(const void* src, int64_t src_offset, std::span<const int64_t> shape,
                  std::span<const int64_t> src_strides, void* dst, size_t element_size, ThreadPool* pool);

}  // namespace edgefuse
