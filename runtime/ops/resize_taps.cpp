#include "runtime/ops/resize_taps.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace edgefuse {

namespace {

template <typename Enum, size_t N>
Result<Enum> parse_choice(const Node& node, const char* name, const char* fallback,
                          const std::array<std::pair<const char*, Enum>, N>& choices) {
  const std::string value = node.attrs.get_string(name, fallback);
  for (const auto& [text, choice] : choices) {
    if (value == text) return choice;
  }
  return unsupported("Resize ", name, " '", value, "'");
}

// Weights of the 4 neighbours floor(x) - 1 .. floor(x) + 2 for fraction t (Keys cubic, parameter a).
std::array<double, 4> cubic_weights(double t, double a) {
  const auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };       // |d| <= 1
  const auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < |d| < 2
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

int64_t nearest_index(NearestRounding rounding, double x) {
  const double lower = std::floor(x);
  const double fraction = x - lower;
  switch (rounding) {
    case NearestRounding::kRoundPreferFloor:
      return static_cast<int64_t>(fraction <= 0.5 ? lower : lower + 1);
    case NearestRounding::kRoundPreferCeil:
      return static_cast<int64_t>(fraction < 0.5 ? lower : lower + 1);
    case NearestRounding::kFloor:
      return static_cast<int64_t>(lower);
    case NearestRounding::kCeil:
      return static_cast<int64_t>(std::ceil(x));
  }
  return 0;
}

}  // namespace

Result<ResizeAttributes> read_resize_attributes(const Node& node) {
  ResizeAttributes attrs;
  EF_ASSIGN_OR_RETURN(
      attrs.mode,
      (parse_choice<ResizeMode, 3>(
          node, "mode", "nearest",
          {{{"nearest", ResizeMode::kNearest}, {"linear", ResizeMode::kLinear}, {"cubic", ResizeMode::kCubic}}})));
  EF_ASSIGN_OR_RETURN(attrs.transform, (parse_choice<CoordinateTransform, 6>(
                                           node, "coordinate_transformation_mode", "half_pixel",
                                           {{{"half_pixel", CoordinateTransform::kHalfPixel},
                                             {"asymmetric", CoordinateTransform::kAsymmetric},
                                             {"align_corners", CoordinateTransform::kAlignCorners},
                                             {"pytorch_half_pixel", CoordinateTransform::kPytorchHalfPixel},
                                             {"tf_half_pixel_for_nn", CoordinateTransform::kTfHalfPixelForNearest},
                                             {"tf_crop_and_resize", CoordinateTransform::kTfCropAndResize}}})));
  EF_ASSIGN_OR_RETURN(attrs.rounding,
                      (parse_choice<NearestRounding, 4>(node, "nearest_mode", "round_prefer_floor",
                                                        {{{"round_prefer_floor", NearestRounding::kRoundPreferFloor},
                                                          {"round_prefer_ceil", NearestRounding::kRoundPreferCeil},
                                                          {"floor", NearestRounding::kFloor},
                                                          {"ceil", NearestRounding::kCeil}}})));
  attrs.cubic_coeff_a = node.attrs.get_float("cubic_coeff_a", -0.75f);
  attrs.exclude_outside = node.attrs.get_int("exclude_outside", 0) != 0;
  attrs.extrapolation_value = node.attrs.get_float("extrapolation_value", 0.0f);
  // Opset 18 additions, not supported: they would change the output silently if ignored.
  if (node.attrs.get_int("antialias", 0) != 0) return unsupported("Resize antialias=1");
  if (node.attrs.has("axes")) return unsupported("Resize attribute 'axes' (opset 18)");
  if (node.attrs.get_string("keep_aspect_ratio_policy", "stretch") != "stretch") {
    return unsupported("Resize keep_aspect_ratio_policy '", node.attrs.get_string("keep_aspect_ratio_policy", ""), "'");
  }
  return attrs;
}

double resize_source_coordinate(CoordinateTransform transform, double x, double scale, int64_t in_len,
                                double resized_len, double roi_start, double roi_end) {
  const auto in = static_cast<double>(in_len);
  const double out = resized_len;
  switch (transform) {
    case CoordinateTransform::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case CoordinateTransform::kAsymmetric:
      return x / scale;
    case CoordinateTransform::kAlignCorners:
      return out == 1 ? 0.0 : x * (in - 1) / (out - 1);
    case CoordinateTransform::kPytorchHalfPixel:
      return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case CoordinateTransform::kTfHalfPixelForNearest:
      return (x + 0.5) / scale;
    case CoordinateTransform::kTfCropAndResize:
      return out > 1 ? roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) / (out - 1)
                     : 0.5 * (roi_start + roi_end) * (in - 1);
  }
  return 0.0;
}

AxisTaps resize_axis_taps(const ResizeAttributes& attrs, int64_t in_len, int64_t out_len, double scale,
                          double resized_len, double roi_start, double roi_end) {
  AxisTaps axis;
  axis.taps = attrs.mode == ResizeMode::kNearest ? 1 : attrs.mode == ResizeMode::kLinear ? 2 : 4;
  const auto taps = static_cast<size_t>(axis.taps);
  axis.index.assign(static_cast<size_t>(out_len) * taps, 0);
  axis.weight.assign(static_cast<size_t>(out_len) * taps, 0.0);
  axis.outside.assign(static_cast<size_t>(out_len), 0);
  axis.identity = in_len == out_len;
  const auto clamp_index = [in_len](int64_t i) { return std::clamp<int64_t>(i, 0, in_len - 1); };
  for (int64_t o = 0; o < out_len; ++o) {
    const double x = resize_source_coordinate(attrs.transform, static_cast<double>(o), scale, in_len, resized_len,
                                              roi_start, roi_end);
    int64_t* index = &axis.index[static_cast<size_t>(o) * taps];
    double* weight = &axis.weight[static_cast<size_t>(o) * taps];
    if (attrs.transform == CoordinateTransform::kTfCropAndResize && (x < 0 || x > static_cast<double>(in_len - 1))) {
      axis.outside[static_cast<size_t>(o)] = 1;
      axis.identity = false;
      continue;
    }
    // Coordinates far outside the input (extreme scales) clamp to it; keeps the int64 casts defined.
    const double bounded = std::clamp(x, -4.0, static_cast<double>(in_len) + 4.0);
    const auto lower = static_cast<int64_t>(std::floor(bounded));
    const double t = bounded - std::floor(bounded);
    switch (attrs.mode) {
      case ResizeMode::kNearest:
        index[0] = clamp_index(nearest_index(attrs.rounding, bounded));
        weight[0] = 1.0;
        break;
      case ResizeMode::kLinear:
        index[0] = clamp_index(lower);
        index[1] = clamp_index(lower + 1);
        weight[0] = 1.0 - t;
        weight[1] = t;
        break;
      case ResizeMode::kCubic: {
        const std::array<double, 4> w = cubic_weights(t, attrs.cubic_coeff_a);
        double sum = 0.0;
        for (size_t k = 0; k < 4; ++k) {
          const int64_t i = lower - 1 + static_cast<int64_t>(k);
          weight[k] = (attrs.exclude_outside && (i < 0 || i >= in_len)) ? 0.0 : w[k];
          index[k] = clamp_index(i);
          sum += weight[k];
        }
        if (attrs.exclude_outside && sum != 0.0) {
          for (size_t k = 0; k < 4; ++k) weight[k] /= sum;
        }
        break;
      }
    }
    for (size_t k = 0; k < taps; ++k) {
      if (weight[k] != 0.0 && index[k] != o) axis.identity = false;
    }
  }
  return axis;
}

}  // namespace edgefuse
