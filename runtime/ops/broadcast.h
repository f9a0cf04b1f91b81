// Broadcasting of two operands (ONNX multidirectional, numpy rules): the shape rule, and a
// loop plan that walks the output as rows of one contiguous inner run.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/status.h"
#include "runtime/tensor.h"

namespace edgefuse {

// Shapes are aligned at their last dim; each pair of dims must be equal or contain a 1 (a 1
// against 0 gives 0). Errors name both shapes and the first offending output dim.
Result<Shape> broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b);

// Checks that `from` broadcasts unidirectionally to `to`: the result has exactly `to`'s shape.
Status check_unidirectional_broadcast(std::span<const int64_t> from, std::span<const int64_t> to);

// Element strides for reading a contiguous tensor of `shape` at the indices of `out_shape`
// (which it broadcasts to): one per output dim, 0 where `shape` has a 1 or no dim.
std::vector<int64_t> broadcast_strides(std::span<const int64_t> shape, std::span<const int64_t> out_shape);

// The output of a broadcast binary op reduced to the fewest dims: size-1 dims are dropped and
// neighbouring dims that are contiguous in both operands merge. The last dim is the inner run,
// along which each operand's stride is 1 (contiguous) or 0 (one element repeated); the other
// dims form rows. [N,C,H,W] op [1,C,1,1] becomes dims [N, C, H*W] with b strides [0, 1, 0]:
// per-channel rows whose b operand is a scalar.
struct BroadcastLoop {
  Shape dims;                      // at least one dim; empty output: numel() == 0
  std::vector<int64_t> strides_a;  // per dim, in elements of a
  std::vector<int64_t> strides_b;

  int64_t inner() const { return dims.back(); }
  int64_t rows() const { return inner() == 0 ? 0 : shape_numel(dims) / inner(); }
};

BroadcastLoop plan_broadcast_loop(std::span<const int64_t> a_shape, std::span<const int64_t> b_shape,
                                  std::span<const int64_t> out_shape);

// The same reduction for any number of operands (PointwiseChain): strides[k][d] is operand k's
// element stride along loop dim d; along the last dim each operand's stride is 0 or 1.
struct MultiBroadcastLoop {
  Shape dims;
  std::vector<std::vector<int64_t>> strides;

  int64_t inner() const { return dims.back(); }
  int64_t rows() const { return inner() == 0 ? 0 : shape_numel(dims) / inner(); }
  // Operand k's offset at the start of row `row`.
  int64_t row_offset(size_t k, int64_t row) const;
};

MultiBroadcastLoop plan_multi_broadcast_loop(std::span<const Shape> shapes, std::span<const int64_t> out_shape);

// Calls run(offset_a, offset_b, offset_out) for rows [row_begin, row_end) of `loop`; each row
// covers loop.inner() output elements starting at offset_out.
template <typename RunFn>
void for_each_row(const BroadcastLoop& loop, int64_t row_begin, int64_t row_end, RunFn&& run) {
  const int outer_rank = static_cast<int>(loop.dims.size()) - 1;
  std::vector<int64_t> index(static_cast<size_t>(outer_rank), 0);
  int64_t offset_a = 0;
  int64_t offset_b = 0;
  for (int64_t rest = row_begin, d = outer_rank - 1; d >= 0; --d) {
    index[d] = rest % loop.dims[d];
    rest /= loop.dims[d];
    offset_a += index[d] * loop.strides_a[d];
    offset_b += index[d] * loop.strides_b[d];
  }
  for (int64_t row = row_begin; row < row_end; ++row) {
    run(offset_a, offset_b, row * loop.inner());
    // Odometer step over the outer dims.
    for (int d = outer_rank - 1; d >= 0; --d) {
      offset_a += loop.strides_a[d];
      offset_b += loop.strides_b[d];
      if (++index[d] < loop.dims[d]) break;
      offset_a -= index[d] * loop.strides_a[d];
      offset_b -= index[d] * loop.strides_b[d];
      index[d] = 0;
    }
  }
}

}  // namespace edgefuse
