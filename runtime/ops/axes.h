// Checking inputs, and reading axis attributes and integer operand tensors (axes, starts, pads,
// shapes...) whose values come from the model and so are untrusted: every helper range-checks and
// reports what it read.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/status.h"
#include "runtime/tensor.h"

namespace edgefuse {

// An error naming input `name` when input `index` is omitted (nullptr) or past the end.
Status require_input(std::span<const Tensor* const> inputs, size_t index, std::string_view name);

// Maps an axis in [-rank, rank - 1] to [0, rank - 1]; `what` names the operand in errors ("axis").
Result<int> normalize_axis(int64_t axis, int rank, std::string_view what);

// Normalises each axis as above and rejects duplicates.
Result<std::vector<int>> normalize_axes(std::span<const int64_t> axes, int rank, std::string_view what);

// The values of an i32/i64 operand tensor of rank 0 or 1. A tensor without data (known only by
// its shape at inference time) is kUnsupported: the shape rule needs `name` to be a constant.
Result<std::vector<int64_t>> read_constant_ints(const Tensor& tensor, std::string_view name);

}  // namespace edgefuse
