// Limited-range YUV -> RGB coefficients, derived from each standard's luma weights Kr and Kb:
//   R = y_gain (Y - 16) + r_from_v (V - 128)
//   G = y_gain (Y - 16) + g_from_u (U - 128) + g_from_v (V - 128)
//   B = y_gain (Y - 16) + b_from_u (U - 128)
#pragma once

#include "pipeline/preprocess/yuv_image.h"

namespace edgefuse {

struct YuvToRgbCoefficients {
  float y_gain = 0;
  float r_from_v = 0;
  float g_from_u = 0, g_from_v = 0;
  float b_from_u = 0;
};

YuvToRgbCoefficients yuv_to_rgb_coefficients(YuvMatrix matrix);

}  // namespace edgefuse
