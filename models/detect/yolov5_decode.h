// Decoding of YOLOv5 outputs: three anchor boxes per grid cell, already decoded by the exported
// graph into input pixels.
#pragma once

#include <cstdint>

#include "models/detect/decode_result.h"
#include "models/detect/yolo_grid.h"

namespace edgefuse {

inline constexpr int kYolov5AnchorsPerCell = 3;
inline constexpr int64_t kYolov5BoxChannels = 5;  // cx, cy, w, h, objectness; class scores follow

// Rows of a YOLOv5 output for an input of this size: three per cell of the grids of strides 8, 16, 32.
inline int64_t yolov5_row_count(int input_width, int input_height) {
  return kYolov5AnchorsPerCell * yolo_cell_count(input_width, input_height);
}

// Decodes the [rows, channels] output of YOLOv5 (the batch dim dropped). Each row yields at most
// one detection: its best class, kept when objectness * class score >= score_threshold. Boxes are
// in input (letterboxed) pixels. Errors when rows < 1 or channels < 6.
DecodeResult decode_yolov5(const float* output, int64_t rows, int64_t channels, float score_threshold);

}  // namespace edgefuse
