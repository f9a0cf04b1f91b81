// Index helpers for naive, element-by-element oracles in the data-movement op tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/tensor.h"

namespace edgefuse::test {

// Row-major multi-index of flat position `flat` in `shape`.
inline std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

inline int64_t ravel(const std::vector<int64_t>& index, const Shape& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

// Copies element `from` of `src` to element `to` of `dst` (same dtype), whatever the dtype.
inline void copy_element(const Tensor& src, int64_t from, Tensor& dst, int64_t to) {
  const size_t size = dtype_size(src.dtype());
  std::memcpy(static_cast<unsigned char*>(dst.raw_data()) + static_cast<size_t>(to) * size,
              static_cast<const unsigned char*>(src.raw_data()) + static_cast<size_t>(from) * size, size);
}

// Same dtype, shape and bytes.
inline bool identical(const Tensor& a, const Tensor& b) {
  return a.desc() == b.desc() && (a.nbytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0);
}

}  // namespace edgefuse::test
