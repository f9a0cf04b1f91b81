#include "pipeline/preprocess/colour_matrix.h"

namespace edgefuse {
namespace {

// Limited range stretches Y's 219 steps and U/V's 224 steps (each side of 128: 112) to 255.
YuvToRgbCoefficients from_luma_weights(double kr, double kb) {
  const double kg = 1.0 - kr - kb;
  const double y_gain = 255.0 / 219.0;
  const double c_gain = 255.0 / 224.0;
  YuvToRgbCoefficients c;
  c.y_gain = static_cast<float>(y_gain);
  c.r_from_v = static_cast<float>(2.0 * (1.0 - kr) * c_gain);
  c.b_from_u = static_cast<float>(2.0 * (1.0 - kb) * c_gain);
  c.g_from_u = static_cast<float>(-2.0 * kb * (1.0 - kb) / kg * c_gain);
  c.g_from_v = static_cast<float>(-2.0 * kr * (1.0 - kr) / kg * c_gain);
  return c;
}

}  // namespace

YuvToRgbCoefficients yuv_to_rgb_coefficients(YuvMatrix matrix) {
  switch (matrix) {
    case YuvMatrix::kBt601:
      return from_luma_weights(0.299, 0.114);
    case YuvMatrix::kBt709:
      return from_luma_weights(0.2126, 0.0722);
  }
  return from_luma_weights(0.299, 0.114);
}

}  // namespace edgefuse
