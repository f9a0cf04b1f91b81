// What cuDNN is asked to compute for a windowed group-1 Conv step (ConvGemmStep: the stem, dense 3x3
// Convs) when the executor runs it through cuDNN (cudnn_conv.h): the bare convolution into the
// step's output, then the fuser's epilogue (bias, residual, activation) as PointwiseEpilogueStep,
// since cuDNN's legacy API fuses neither SiLU nor a residual added after the activation.
//
// Plain C++ (no cuDNN or CUDA headers), so the host tests check the mapping and the split into
// two steps without a GPU: cuDNN itself only runs on a device.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>

#include "runtime/cuda/conv_gemm_step.h"
#include "runtime/cuda/pointwise_conv_step.h"

namespace edgefuse::gpu {

// A 2-d convolution as cuDNN's 4-d descriptors take it: X [N, C, H, W] with explicit strides
// (channels-last inputs keep their layout), W [M, C, KH, KW] and Y [N, M, OH, OW] packed, the same
// padding before and after (the output size decides what lies beyond the end).
struct CudnnConvShape {
  int batch = 0;
  int in_channels = 0;
  int out_channels = 0;
  int input[2] = {};   // H, W
  int kernel[2] = {};  // KH, KW
  int stride[2] = {};
  int dilation[2] = {};
  int pad[2] = {};
  int output[2] = {};  // OH, OW
  bool input_channels_last = false;

  // X's element strides for N, C, H and W.
  void input_strides(int (&strides)[4]) const;
  auto operator<=>(const CudnnConvShape&) const = default;
};

// The shape of `step`'s convolution, or nothing when cuDNN's legacy API cannot express it: a group
// other than 1, a third spatial axis, padding after the last output that is not the padding before
// it, or a size beyond a 32-bit int.
std::optional<CudnnConvShape> cudnn_conv_shape(const ConvStep& step);

// Whether `step` (bound to its buffers) may run through cuDNN and then PointwiseEpilogueStep: it
// has a CudnnConvShape, every operand is f32 (cuDNN's fp16 convolutions would need the weights in
// binary16), and neither X nor a residual lies in Y's bytes (the convolution writes Y before the
// epilogue reads them).
bool cudnn_conv_eligible(const ConvGemmStep& step);

// The convolution of `step` alone: no bias, residual or activation (what cuDNN computes).
ConvStep bare_convolution(const ConvStep& step);

// The epilogue PointwiseEpilogueStep applies, in place, after `step`'s bare convolution.
PointwiseEpilogueStep epilogue_after_convolution(const ConvStep& step);

}  // namespace edgefuse::gpu
