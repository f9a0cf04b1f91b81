// Shape rules and kernels of every op, as referenced by the op table (runtime/op_table.cpp).
// Naming: infer_<op> is the shape rule, reference_<op> the naive kernel, cpu_<op> the optimised
// CPU kernel. Ops of one family share a rule where their shapes behave alike.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "runtime/op_table.h"

namespace edgefuse {

// Shared shape rules.
Status infer_same_as_input(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs);
Status infer_broadcast(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs);

#define EF_DECLARE_INFER(op) \
  Status infer_##op(const Node& node, std::span<const Tensor* const> inputs, std::vector<TensorDesc>& outputs);
#define EF_DECLARE_REFERENCE(op) Status reference_##op(const KernelArgs& args);
#define EF_DECLARE_CPU(op) Status cpu_##op(const KernelArgs& args);

// conv.cpp, conv_transpose.cpp
EF_DECLARE_INFER(conv)
EF_DECLARE_REFERENCE(conv)
EF_DECLARE_CPU(conv)
EF_DECLARE_INFER(conv_transpose)
EF_DECLARE_REFERENCE(conv_transpose)
// matmul.cpp
EF_DECLARE_INFER(matmul)
EF_DECLARE_REFERENCE(matmul)
EF_DECLARE_CPU(matmul)
EF_DECLARE_INFER(gemm)
EF_DECLARE_REFERENCE(gemm)
EF_DECLARE_CPU(gemm)
// normalization.cpp
EF_DECLARE_INFER(batch_normalization)
EF_DECLARE_REFERENCE(batch_normalization)
// pool.cpp
EF_DECLARE_INFER(pool)  // MaxPool and AveragePool
EF_DECLARE_REFERENCE(max_pool)
EF_DECLARE_CPU(max_pool)
EF_DECLARE_REFERENCE(average_pool)
EF_DECLARE_INFER(global_average_pool)
EF_DECLARE_REFERENCE(global_average_pool)
// unary.cpp: pointwise ops of one input (Clip's min/max are optional scalar inputs)
EF_DECLARE_REFERENCE(relu)
EF_DECLARE_REFERENCE(leaky_relu)
EF_DECLARE_REFERENCE(sigmoid)
EF_DECLARE_REFERENCE(tanh)
EF_DECLARE_REFERENCE(hard_sigmoid)
EF_DECLARE_REFERENCE(hard_swish)
EF_DECLARE_REFERENCE(clip)
EF_DECLARE_REFERENCE(sqrt)
EF_DECLARE_REFERENCE(exp)
EF_DECLARE_CPU(unary)  // optimised path for every f32 unary op above, dispatched on node.op
// binary.cpp: pointwise ops of two inputs with multidirectional broadcasting
EF_DECLARE_REFERENCE(add)
EF_DECLARE_REFERENCE(sub)
EF_DECLARE_REFERENCE(mul)
EF_DECLARE_REFERENCE(div)
EF_DECLARE_REFERENCE(pow)
EF_DECLARE_REFERENCE(prelu)
EF_DECLARE_CPU(binary)  // optimised path for every binary op above, dispatched on node.op
// softmax.cpp, reduce.cpp, cast.cpp
EF_DECLARE_INFER(softmax)
EF_DECLARE_REFERENCE(softmax)
EF_DECLARE_CPU(softmax)
// SoftmaxExpectation (internal, fusion/fuse_softmax_expectation.cpp): inputs X, weights W (f32,
// [X.dim(axis)]), optional bias B (f32, one element); attribute `axis`. Y has X's shape with
// dim `axis` 1: Y = sum_k softmax(X, axis)_k * W[k] + B.
EF_DECLARE_INFER(softmax_expectation)
EF_DECLARE_REFERENCE(softmax_expectation)
EF_DECLARE_CPU(softmax_expectation)
EF_DECLARE_INFER(reduce_mean)
EF_DECLARE_REFERENCE(reduce_mean)
EF_DECLARE_INFER(cast)
EF_DECLARE_REFERENCE(cast)
// movement.cpp: ops that move data without arithmetic
EF_DECLARE_INFER(concat)
EF_DECLARE_REFERENCE(concat)
EF_DECLARE_INFER(split)
EF_DECLARE_REFERENCE(split)
EF_DECLARE_INFER(slice)
EF_DECLARE_REFERENCE(slice)
// Where a Slice (inputs: data, starts, ends, axes, steps; the operands with data) reads its data,
// per axis: the output's extent, the first index and the step (axes not sliced: dim, 0, 1; 1
// where one element is picked). Starts and ends clamp as ONNX states; errors name the operand.
struct SliceGeometry {
  Shape shape;
  std::vector<int64_t> start;
  std::vector<int64_t> step;
};
Result<SliceGeometry> slice_geometry(std::span<const Tensor* const> inputs);
// The first index on `axis` of a Slice of `whole` that cuts that axis alone with step 1; else nothing.
std::optional<int64_t> slice_start_on_axis(const SliceGeometry& slice, const Shape& whole, int axis);
EF_DECLARE_INFER(transpose)
EF_DECLARE_REFERENCE(transpose)
// A Transpose with this attribute (the fuser's fold_concat_into_transpose) permutes the
// concatenation of its inputs on that axis, as a Concat(axis) feeding it would have made. Each
// input's part of the output is one contiguous block per index of the output dims before the
// concatenated axis's new place: one block when they are all 1, as the fuser folds it, one per
// image once the batch was made dynamic (models/detector/batching.h).
inline constexpr const char* kTransposeConcatAxis = "fused_concat_axis";
// A Transpose's permutation for an input of `rank` dims: its perm attribute, checked to be a
// permutation of [0, rank), or the reversal of the axes when it has none.
Result<std::vector<int64_t>> transpose_permutation(const Attributes& attrs, int rank);
// Where the input's axis `axis` lands in the output of a Transpose by `perm`.
size_t transposed_position(std::span<const int64_t> perm, int64_t axis);
EF_DECLARE_INFER(gather)
EF_DECLARE_REFERENCE(gather)
EF_DECLARE_INFER(pad)
EF_DECLARE_REFERENCE(pad)
// resize.cpp
EF_DECLARE_INFER(resize)
EF_DECLARE_REFERENCE(resize)
// shape_ops.cpp: ops that only change the description, or compute shapes and constants
EF_DECLARE_INFER(reshape)
EF_DECLARE_INFER(flatten)
EF_DECLARE_INFER(squeeze)
EF_DECLARE_INFER(unsqueeze)
EF_DECLARE_REFERENCE(copy_input)  // Reshape, Flatten, Squeeze, Unsqueeze, Identity: output = input data
EF_DECLARE_INFER(shape)
EF_DECLARE_REFERENCE(shape)
EF_DECLARE_INFER(constant_of_shape)
EF_DECLARE_REFERENCE(constant_of_shape)
EF_DECLARE_INFER(constant)
EF_DECLARE_REFERENCE(constant)
// pointwise_chain.cpp, pointwise_chain_cpu.cpp: the fuser's chains of pointwise ops
EF_DECLARE_INFER(pointwise_chain)
EF_DECLARE_REFERENCE(pointwise_chain)
EF_DECLARE_CPU(pointwise_chain)

#undef EF_DECLARE_INFER
#undef EF_DECLARE_REFERENCE
#undef EF_DECLARE_CPU

}  // namespace edgefuse
