// Decoding of YOLOv8 outputs (also YOLO11's, which export the same head): anchor-free, one
// prediction per grid cell, boxes already decoded into input pixels, no objectness.
#pragma once

#include <cstdint>

#include "models/detect/decode_result.h"
#include "models/detect/yolo_grid.h"

namespace edgefuse {

inline constexpr int64_t kYolov8BoxChannels = 4;  // cx, cy, w, h; class scores follow

// Decodes the [channels, anchors] output of YOLOv8 (the batch dim dropped; channel-major, so one
// channel of all anchors is contiguous). Each anchor yields at most one detection: its best class,
// kept when that class's score >= score_threshold. Boxes are in input (letterboxed) pixels.
// Errors when anchors < 1 or channels < 5.
DecodeResult decode_yolov8(const float* output, int64_t channels, int64_t anchors, float score_threshold);

}  // namespace edgefuse
