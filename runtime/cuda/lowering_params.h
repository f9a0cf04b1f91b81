// Lowering's pure pieces: step parameters worked out from a node's attributes and shapes alone,
// without the plan (lowering.cpp places the operands). Free functions, so that each can be read and
// tested on its own.
#pragma once

#include <cstdint>
#include <optional>

#include "runtime/cuda/depthwise_conv_step.h"
#include "runtime/cuda/device_math.h"
#include "runtime/cuda/pointwise_conv_step.h"
#include "runtime/cuda/step_kernels.h"
#include "runtime/graph.h"
#include "runtime/ops/conv_problem.h"
#include "runtime/ops/window_geometry.h"
#include "runtime/status.h"

namespace edgefuse::gpu {

// The fuser's Conv epilogue on `node` (its activation and parameters) as kernel parameters.
Result<ActivationParams> epilogue_activation(const Node& node);

// A depthwise Conv DepthwiseConvStep takes (2-D, kernel up to 5x5, stride 1-2, no dilation, a
// residual of every channel), without its epilogue; nullopt for the others.
std::optional<DepthwiseConvStep> depthwise_conv_step(const ConvProblem& p, const WindowGeometry& g,
                                                     int64_t residual_channels);

// A 1x1 stride-1 unpadded group-1 Conv as PointwiseConvStep, without its epilogue; nullopt for the
// others.
std::optional<PointwiseConvStep> pointwise_conv_step(const ConvProblem& p, const WindowGeometry& g);

// Copies a window's geometry (padded to 3 axes) into a step that slides one: ConvStep or PoolStep,
// which name the fields alike (PoolStep's pad_end is its own).
template <typename WindowStep>
void copy_window(const WindowGeometry& g, WindowStep& s) {
  for (int a = 0; a < 3; ++a) {
    s.input[a] = g.input[a];
    s.kernel[a] = g.kernel[a];
    s.stride[a] = g.strides[a];
    s.dilation[a] = g.dilations[a];
    s.pad_begin[a] = g.pad_begin[a];
    s.output[a] = g.output[a];
  }
}

// Any Conv as ConvStep, without its epilogue.
ConvStep general_conv_step(const ConvProblem& p, const WindowGeometry& g);

// The activation computing unary op `op` with its parameters (alpha, beta: LeakyRelu,
// HardSigmoid; lo, hi: Clip).
ActivationParams unary_activation(OpKind op, float alpha, float beta, float lo, float hi);

// The GPU's binary op for ONNX's Add, Sub, Mul, Div, Pow and PRelu.
BinaryOp binary_op(OpKind op);

// Concat and Split along `axis` of `whole`: each part is `part` slices of the axis starting at
// slice `at`, a block of rows (the dims before the axis) of part x inner elements.
BlockCopyStep part_copy(const TensorDesc& whole, int64_t axis, int64_t part, int64_t at, bool into_whole);

// Concat's and Split's `axis` attribute, negative values counted from the end of `rank` dims.
int64_t normalized_axis(const Node& node, size_t rank);

}  // namespace edgefuse::gpu
