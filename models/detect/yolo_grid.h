// The grids the YOLO heads (YOLOX, YOLOv5, YOLOv8) predict on: strides 8, 16 and 32 (the P3-P5
// feature maps), (W / s) x (H / s) cells each; outputs list the levels in that order, each level
// row by row.
#pragma once

#include <cstdint>

namespace edgefuse {

inline constexpr int kYoloStrides[] = {8, 16, 32};

// Cells of all levels for an input of this size: sum over strides of (W / s) * (H / s).
inline int64_t yolo_cell_count(int input_width, int input_height) {
  int64_t cells = 0;
  for (int stride : kYoloStrides) cells += static_cast<int64_t>(input_width / stride) * (input_height / stride);
  return cells;
}

}  // namespace edgefuse
