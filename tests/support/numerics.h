// Random inputs and error measures shared by the numeric tests.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "runtime/tensor.h"

namespace edgefuse::test {

// Uniform values in [lo, hi) for float tensors, integers in [lo, hi] for integer tensors.
Tensor random_tensor(DType dtype, Shape shape, std::mt19937& rng, double lo = -1.0, double hi = 1.0);

struct ErrorStats {
  double relative_l2 = 0;  // ||a - b|| / max(||b||, tiny)
  double max_abs = 0;
  int64_t mismatched_nan = 0;  // positions where exactly one side is NaN
  std::string to_string() const;
};

// Compares `actual` against `expected` element-wise (any numeric dtypes, same element count).
ErrorStats compare_tensors(const Tensor& actual, const Tensor& expected);

}  // namespace edgefuse::test
