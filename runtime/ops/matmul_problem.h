// The validated sizes of MatMul and Gemm nodes, shared by their shape rules and kernels.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace edgefuse {

// MatMul with numpy semantics: a 1-D A is a row [1, K], a 1-D B a column [K, 1] (the promoted
// dim is dropped from the output); leading batch dims broadcast.
struct MatMulProblem {
  int64_t m = 0, k = 0, n = 0;
  Shape output;
  // Per broadcast batch index (row-major over the output's batch dims): the element offsets of
  // that batch's A [m, k] and B [k, n] matrices. Y's batch b starts at b * m * n.
  std::vector<int64_t> a_offsets;
  std::vector<int64_t> b_offsets;
};

Result<MatMulProblem> matmul_problem(const Tensor& a, const Tensor& b);

// Gemm: Y [M, N] = alpha * op(A) * op(B) + beta * C, with op() transposing when transA/transB is
// set, and C (optional) broadcast unidirectionally to [M, N].
struct GemmProblem {
  int64_t m = 0, k = 0, n = 0;
  bool trans_a = false, trans_b = false;
  float alpha = 1, beta = 1;
  // Strides to read C at Y's [row, column] (0 along broadcast dims); meaningless without C.
  int64_t c_row_stride = 0, c_column_stride = 0;
};

Result<GemmProblem> gemm_problem(const Node& node, std::span<const Tensor* const> inputs);

}  // namespace edgefuse
