// Resize's sampling along one axis (ONNX Resize, opsets 11-13): the attributes, the transform from
// an output coordinate to an input coordinate, and for each output index the input indices and
// weights that produce it. Resize is separable, so an n-D resize is the product of these per axis.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/graph.h"
#include "runtime/status.h"

namespace edgefuse {

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class CoordinateTransform {
  kHalfPixel,
  kAsymmetric,
  kAlignCorners,
  kPytorchHalfPixel,
  kTfHalfPixelForNearest,
  kTfCropAndResize,
};
enum class NearestRounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeAttributes {
  ResizeMode mode = ResizeMode::kNearest;
  CoordinateTransform transform = CoordinateTransform::kHalfPixel;
  NearestRounding rounding = NearestRounding::kRoundPreferFloor;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;  // tf_crop_and_resize: the value sampled outside the input
};

// Reads and checks the attributes (names and defaults as ONNX); unknown values are kUnsupported.
Result<ResizeAttributes> read_resize_attributes(const Node& node);

// The input coordinate sampled for output index `x`. `scale` is out/in: the scales input when given,
// else sizes / in_len. `resized_len` is in_len * scale before flooring to the output size (as the
// ONNX reference computes align_corners and tf_crop_and_resize), or the sizes input.
// roi_start/roi_end are used by tf_crop_and_resize only.
double resize_source_coordinate(CoordinateTransform transform, double x, double scale, int64_t in_len,
                                double resized_len, double roi_start, double roi_end);

struct AxisTaps {
  int taps = 1;                  // per output index: 1 (nearest), 2 (linear) or 4 (cubic)
  std::vector<int64_t> index;    // [out_len * taps] input indices, clamped into [0, in_len)
  std::vector<double> weight;    // [out_len * taps]
  std::vector<uint8_t> outside;  // [out_len] 1 where tf_crop_and_resize samples outside the input
  bool identity = false;         // output index i reads exactly input index i
};

// Requires in_len > 0 when out_len > 0. out_len is the number of output indices.
AxisTaps resize_axis_taps(const ResizeAttributes& attrs, int64_t in_len, int64_t out_len, double scale,
                          double resized_len, double roi_start, double roi_end);

}  // namespace edgefuse
