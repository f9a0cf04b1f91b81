// Decoding of YOLOX outputs (anchor-free, one prediction per grid cell) into boxes in input pixels.
#pragma once

#include <cstdint>

#include "models/detect/decode_result.h"
#include "models/detect/yolo_grid.h"

namespace edgefuse {

inline constexpr int64_t kYoloxBoxChannels = 5;  // dx, dy, log w, log h, objectness; class scores follow

// Decodes the [anchors, channels] output of YOLOX (the batch dim dropped) for an input of
// input_width x input_height pixels. Each cell yields at most one detection: its best class, kept
// when objectness * class score >= score_threshold. Boxes are in input (letterboxed) pixels.
// Errors when anchors != yolo_cell_count(...) or channels < 6.
DecodeResult decode_yolox(const float* output, int64_t anchors, int64_t channels, int input_width, int input_height,
                          float score_threshold);

}  // namespace edgefuse
