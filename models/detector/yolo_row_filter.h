// The GPU row filters of the YOLO families (runtime/cuda/lowering.h, RowFilter): which rows of the
// output can hold a detection, and how the device decodes and suppresses among them, so that only
// the rows of kept detections come back; the CPU then decodes and suppresses exactly those again.
#pragma once

#include <optional>

#include "models/detector/detector.h"
#include "runtime/cuda/lowering.h"

namespace edgefuse {

// YOLOX: rows by objectness (an upper bound of the score), boxes on the grids of strides 8, 16, 32
// of a width x height input. YOLOv5: rows by objectness, boxes decoded already. YOLOv8: its
// channel-major columns by their best class score, which is their score, boxes decoded already.
// NMS per class, as the CPU's. None for BlazeFace (blazeface_row_filter) or a threshold of 0 or
// less, which every row passes.
std::optional<gpu::RowFilter> yolo_row_filter(DetectorFamily family, int width, int height, float score_threshold,
                                              float iou_threshold, int max_detections);

}  // namespace edgefuse
