// The validated sizes of one Conv node, shared by its shape rule and kernels.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/graph.h"
#include "runtime/ops/window_geometry.h"
#include "runtime/tensor.h"

namespace edgefuse {

// Conv: X [N, C, spatial...], W [M, C / group, kernel...], optional B [M] -> Y [N, M, output...].
// Beyond ONNX, the fuser may add input 3, a residual R shaped like Y, and an activation epilogue
// (conv_epilogue.h): Y = act(conv(X, W) + B + R), or with fused_residual_after_activation = 1,
// Y = act(conv(X, W) + B) + R. With group 1, R may have fewer channels than Y (the fuser's
// trim_zero_padded_residuals): channels past R's take no residual, as if R were zero-padded.
// With fused_input_channels_last = 1 (the fuser's fold_transposes, for a Conv that read a
// Transpose moving the last axis to axis 1), X is [N, spatial..., C]: the same Conv on the input
// read channels-last, without the transposed copy. Y stays [N, M, output...].
// With fused_residual_max_pool = 2 (the fuser's fold_max_pool_into_conv_residual, for a 2-D
// Conv whose residual was a MaxPool's output), input 3 is that MaxPool's input, [N, R, 2 OH,
// 2 OW], and the residual added at (oy, ox) is the max over its 2 x 2 window at (2 oy, 2 ox): the
// pooled tensor is never stored.
// With fused_output_channels_last = 1 (the fuser's fold_transpose_into_conv_output, for a Conv
// whose output a Transpose moved channels last), Y is [N, output..., M]: the Transpose's output,
// written without the NCHW copy. No fused residual then. With fused_output_channel_groups = A > 1
// as well (for a Conv whose channels a Reshape split into A groups of K = M / A before the
// Transpose moved K last, as YOLOv5's heads do), Y is [N, A, output..., K]: channels-last within
// each group.
struct ConvProblem {
  int64_t batch = 0;
  int64_t in_channels = 0;   // C
  int64_t out_channels = 0;  // M
  int64_t group = 1;
  bool channels_last = false;         // X is [N, spatial..., C]
  bool residual_pooled = false;       // input 3 is read through a 2 x 2, stride 2 max pool
  bool output_channels_last = false;  // Y is [N, output..., M], or by groups (below)
  int64_t output_channel_groups = 1;  // A: with output_channels_last, Y is [N, A, output..., M / A]
  WindowGeometry geometry;

  int64_t in_channels_per_group() const { return in_channels / group; }
  int64_t out_channels_per_group() const { return out_channels / group; }
  int64_t input_volume() const {
    int64_t volume = 1;
    for (int64_t d : geometry.input) volume *= d;
    return volume;
  }
  // Floats between consecutive channels, and between consecutive positions (along the last
  // spatial axis), of one image of X.
  int64_t input_channel_stride() const { return channels_last ? 1 : input_volume(); }
  int64_t input_position_stride() const { return channels_last ? in_channels : 1; }
};

// The attribute that makes a Conv read its input channels-last (see above).
inline constexpr const char* kConvInputChannelsLast = "fused_input_channels_last";
// The attribute that makes a Conv write its output channels-last (see above).
inline constexpr const char* kConvOutputChannelsLast = "fused_output_channels_last";
// The attribute that splits a channels-last output into groups of channels (see above).
inline constexpr const char* kConvOutputChannelGroups = "fused_output_channel_groups";
// The attribute that makes a Conv read its residual through a 2 x 2 max pool (see above); its one
// value is the window's size and stride, 2.
inline constexpr const char* kConvResidualMaxPool = "fused_residual_max_pool";

// Checks ranks, dtypes, channel counts, group, kernel_shape and bias against each other.
Result<ConvProblem> conv_problem(const Node& node, std::span<const Tensor* const> inputs);

// Checks shared by Conv and ConvTranspose: f32 input of rank 3..5 and a weight of the same dtype and rank.
Status check_conv_operands(const Tensor& x, const Tensor& w);

}  // namespace edgefuse
