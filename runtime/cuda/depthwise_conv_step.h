// The GPU kernel of depthwise Convs (one input channel per output channel, 2-D, kernels up to 5x5,
// strides 1 and 2, no dilation: every depthwise Conv of YOLOX-nano and BlazeFace). One work item
// computes kDepthwiseColumns horizontally adjacent outputs of one row: per kernel row it loads the
// input segment those outputs share once (8 values for 4 outputs of a 5x5 stride-1 window instead
// of 20), and consecutive items take consecutive segments of the same row and channel, so a warp's
// loads are contiguous and its weight loads one address each. ConvStep (step_kernels.h) computes
// the same outputs one item each, with a general window's index arithmetic per tap. On a device,
// square 3x3 and 5x5 windows with equal strides take the shared-memory tile kernel of
// depthwise_conv.h instead.
//
// Taps outside the input are skipped, not multiplied by zero, and each output sums the bias and
// the taps in ConvStep's order, so the two agree.
#pragma once

#include <cstdint>

#include "runtime/cuda/step_kernels.h"

namespace edgefuse::gpu {

inline constexpr int kDepthwiseColumns = 4;
inline constexpr int kDepthwiseMaxKernel = 5;
inline constexpr int kDepthwiseMaxStride = 2;
// Input columns the outputs of one item read in one kernel row.
inline constexpr int kDepthwiseSegment = (kDepthwiseColumns - 1) * kDepthwiseMaxStride + kDepthwiseMaxKernel;

// Operands: X [N, C, H, W], W [C, 1, kh, kw], B (optional), R (optional, [N, C, OH, OW]).
struct DepthwiseConvStep : Operands {
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t input[2] = {1, 1};   // H, W
  int64_t output[2] = {1, 1};  // OH, OW
  int32_t kernel[2] = {1, 1};
  int32_t stride[2] = {1, 1};
  int32_t pad_begin[2] = {0, 0};
  ActivationParams activation;
  bool residual_after_activation = false;
  bool has_residual = false;

  EF_HOST_DEVICE int64_t column_tiles() const { return (output[1] + kDepthwiseColumns - 1) / kDepthwiseColumns; }
  EF_HOST_DEVICE int64_t count() const { return batch * channels * output[0] * column_tiles(); }

  EF_HOST_DEVICE void run(int64_t i) const {
    const int64_t ox0 = (i % column_tiles()) * kDepthwiseColumns;
    int64_t rest = i / column_tiles();
    const int64_t oy = rest % output[0];
    rest /= output[0];
    const int64_t c = rest % channels;
    const int64_t n = rest / channels;
    const int64_t plane = (n * channels + c) * input[0] * input[1];
    const int64_t taps = c * kernel[0] * kernel[1];
    const int64_t first_column = ox0 * stride[1] - pad_begin[1];
    const int segment = (kDepthwiseColumns - 1) * stride[1] + kernel[1];
    const float bias = in[2] != nullptr ? load(2, c) : 0.0f;
    float acc[kDepthwiseColumns];
    for (int q = 0; q < kDepthwiseColumns; ++q) acc[q] = bias;
    for (int ky = 0; ky < kernel[0]; ++ky) {
      const int64_t iy = oy * stride[0] + ky - pad_begin[0];
      if (iy < 0 || iy >= input[0]) continue;
      float x[kDepthwiseSegment];
      bool inside[kDepthwiseSegment];
      for (int j = 0; j < kDepthwiseSegment; ++j) {
        const int64_t ix = first_column + j;
        inside[j] = j < segment && ix >= 0 && ix < input[1];
        x[j] = inside[j] ? load(0, plane + iy * input[1] + ix) : 0.0f;
      }
      for (int kx = 0; kx < kDepthwiseMaxKernel; ++kx) {
        if (kx >= kernel[1]) break;
        const float w = load(1, taps + ky * kernel[1] + kx);
        for (int q = 0; q < kDepthwiseColumns; ++q) {
          const int j = q * stride[1] + kx;
          if (inside[j]) acc[q] += x[j] * w;
        }
      }
    }
    const int64_t out_row = ((n * channels + c) * output[0] + oy) * output[1];
    for (int q = 0; q < kDepthwiseColumns; ++q) {
      if (ox0 + q >= output[1]) break;
      const int64_t o = out_row + ox0 + q;
      if (!has_residual) {
        store(o, apply_activation(activation, acc[q]));
      } else if (residual_after_activation) {
        store(o, apply_activation(activation, acc[q]) + load(3, o));
      } else {
        store(o, apply_activation(activation, acc[q] + load(3, o)));
      }
    }
  }
};

// Whether the device's shared-memory tile kernel (depthwise_conv.h) takes `s`: square 3x3 and 5x5
// windows with equal strides of 1 or 2, within the grid's limits (y and z at most 65535) and with
// 32-bit coordinates within a plane.
inline bool depthwise_tile_fits(const DepthwiseConvStep& s) {
  const bool square = s.kernel[0] == s.kernel[1] && (s.kernel[0] == 3 || s.kernel[0] == 5);
  const bool strides = s.stride[0] == s.stride[1] && (s.stride[0] == 1 || s.stride[0] == 2);
  const bool sizes = s.channels <= 65535 && s.batch <= 65535 && s.input[0] * s.input[1] < (int64_t{1} << 31) &&
                     s.output[0] * s.output[1] < (int64_t{1} << 31);
  return square && strides && sizes;
}

}  // namespace edgefuse::gpu
