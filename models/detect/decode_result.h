// What a decoder returns: the detections, or an error message when the output dims do not fit
// the decoder (this library is standalone, so it reports with a string rather than a Status).
#pragma once

#include <string>
#include <vector>

#include "models/detect/detection.h"

namespace edgefuse {

struct DecodeResult {
  std::vector<Detection> detections;  // empty when !ok()
  std::string error;                  // empty when ok(); names the mismatching dims otherwise

  bool ok() const { return error.empty(); }
};

}  // namespace edgefuse
