// The validated sizes of one MaxPool/AveragePool node, shared by its shape rule and kernels.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/graph.h"
#include "runtime/ops/window_geometry.h"
#include "runtime/tensor.h"

namespace edgefuse {

// X [N, C, spatial...] -> Y [N, C, output...] (and MaxPool's optional Indices, i64, same shape).
struct PoolProblem {
  int64_t batch = 0;
  int64_t channels = 0;
  WindowGeometry geometry;
};

// Reads kernel_shape (required), ceil_mode, auto_pad, pads, strides, dilations; checks rank.
Result<PoolProblem> pool_problem(const Node& node, const Tensor& x);

}  // namespace edgefuse
