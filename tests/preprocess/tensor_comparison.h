// Compares two model input tensors laid out per a ModelInputSpec, in pixel units (tensor
// difference / spec.scale), separately over the letterboxed image and over the padding.
#pragma once

#include <string>

#include "models/detect/input_spec.h"
#include "models/detect/letterbox.h"

namespace edgefuse::test {

struct InputDifference {
  double mean_abs = 0;        // over the image region, pixel units
  double percentile_999 = 0;  // 99.9th percentile of |difference| over the image region
  double max_abs = 0;
  long long padding_mismatches = 0;  // padding elements of `actual` not exactly `padding_value`
  std::string to_string() const;
};

// `shift_x` compares actual's image column x with expected's column x + shift_x (clamped to the
// image): a deliberately misaligned comparison, to show the tolerances catch a one-pixel error.
// `swap_rb` compares actual's R with expected's B and vice versa.
InputDifference compare_inputs(const float* actual, const float* expected, const ModelInputSpec& spec,
                               const Letterbox& letterbox, float padding_value, int shift_x = 0, bool swap_rb = false);

}  // namespace edgefuse::test
