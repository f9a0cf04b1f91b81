#include "runtime/cuda/cudnn_conv_shape.h"

#include <limits>

#include "runtime/cuda/byte_ranges.h"

namespace edgefuse::gpu {
namespace {

constexpr int64_t kLargestInt = std::numeric_limits<int>::max();

bool fits_int(int64_t v) {
  return v >= 0 && v <= kLargestInt;
}

}  // namespace

void CudnnConvShape::input_strides(int (&strides)[4]) const {
  const int plane = input[0] * input[1];
  if (input_channels_last) {
    strides[0] = plane * in_channels;
    strides[1] = 1;
    strides[2] = input[1] * in_channels;
    strides[3] = in_channels;
  } else {
    strides[0] = in_channels * plane;
    strides[1] = plane;
    strides[2] = input[1];
    strides[3] = 1;
  }
}

std::optional<CudnnConvShape> cudnn_conv_shape(const ConvStep& step) {
  if (step.group != 1) return std::nullopt;
  // Steps carry three spatial axes, leading ones of size 1 for 2-d Convs.
  if (step.input[0] != 1 || step.kernel[0] != 1 || step.output[0] != 1 || step.pad_begin[0] != 0) return std::nullopt;
  const int64_t whole[] = {step.batch * step.in_channels * step.input[1] * step.input[2],
                           step.batch * step.out_channels * step.output[1] * step.output[2],
                           step.out_channels * step.in_channels * step.kernel[1] * step.kernel[2]};
  for (int64_t v : whole) {
    if (!fits_int(v) || v == 0) return std::nullopt;
  }
  CudnnConvShape shape;
  shape.batch = static_cast<int>(step.batch);
  shape.in_channels = static_cast<int>(step.in_channels);
  shape.out_channels = static_cast<int>(step.out_channels);
  shape.input_channels_last = step.input_channels_last;
  for (int a = 0; a < 2; ++a) {
    const int axis = a + 1;
    const int64_t values[] = {step.input[axis],    step.kernel[axis],    step.stride[axis],
                              step.dilation[axis], step.pad_begin[axis], step.output[axis]};
    for (int64_t v : values) {
      if (!fits_int(v)) return std::nullopt;
    }
    shape.input[a] = static_cast<int>(step.input[axis]);
    shape.kernel[a] = static_cast<int>(step.kernel[axis]);
    shape.stride[a] = static_cast<int>(step.stride[axis]);
    shape.dilation[a] = static_cast<int>(step.dilation[axis]);
    shape.pad[a] = static_cast<int>(step.pad_begin[axis]);
    shape.output[a] = static_cast<int>(step.output[axis]);
    if (shape.stride[a] < 1 || shape.dilation[a] < 1) return std::nullopt;
    // cuDNN pads both ends alike and sizes the output from that; the step's own padding after
    // the input only matters where it changes how many outputs there are.
    const int64_t span = step.input[axis] + 2 * step.pad_begin[axis] - (step.kernel[axis] - 1) * step.dilation[axis];
    if (span < 1 || (span - 1) / step.stride[axis] + 1 != step.output[axis]) return std::nullopt;
  }
  return shape;
}

bool cudnn_conv_eligible(const ConvGemmStep& step) {
  if (step.half != 0 || step.in[0] == nullptr || step.in[1] == nullptr || step.out == nullptr) return false;
  const std::optional<CudnnConvShape> shape = cudnn_conv_shape(step);
  if (!shape) return false;
  const auto floats = [](int64_t n) { return static_cast<size_t>(n) * 4; };
  const size_t output_bytes = floats(step.batch * step.out_channels * step.output[1] * step.output[2]);
  const size_t input_bytes = floats(step.batch * step.in_channels * step.input[1] * step.input[2]);
  if (byte_ranges_overlap(step.in[0], input_bytes, step.out, output_bytes)) return false;
  const size_t residual_bytes = floats(step.batch * step.residual_channels * step.output[1] * step.output[2]);
  return step.in[3] == nullptr || !byte_ranges_overlap(step.in[3], residual_bytes, step.out, output_bytes);
}

ConvStep bare_convolution(const ConvStep& step) {
  ConvStep bare = step;
  bare.in[2] = nullptr;
  bare.in[3] = nullptr;
  bare.activation = ActivationParams{};
  bare.residual_after_activation = false;
  return bare;
}

PointwiseEpilogueStep epilogue_after_convolution(const ConvStep& step) {
  return epilogue_over_output(step, step.output[0] * step.output[1] * step.output[2]);
}

}  // namespace edgefuse::gpu
