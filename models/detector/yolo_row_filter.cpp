#include "models/detector/yolo_row_filter.h"

#include <iterator>

#include "models/detect/yolo_grid.h"

namespace edgefuse {

std::optional<gpu::RowFilter> yolo_row_filter(DetectorFamily family, int width, int height, float score_threshold,
                                              float iou_threshold, int max_detections) {
  if (!(score_threshold > 0)) return std::nullopt;
  switch (family) {
    case DetectorFamily::kYolox:
      return gpu::RowFilter{
          .output = 0,
          .column = 4,
          .threshold = score_threshold,
          .nms = gpu::RowFilter::GridNms{.input_width = width,
                                         .input_height = height,
                                         .strides = {std::begin(kYoloStrides), std::end(kYoloStrides)},
                                         .iou_threshold = iou_threshold,
                                         .max_detections = max_detections,
                                         .per_class = true}};
    case DetectorFamily::kYolov5:
    case DetectorFamily::kYolov8: {
      const bool objectness = family == DetectorFamily::kYolov5;
      return gpu::RowFilter{.output = 0,
                            .column = 4,
                            .threshold = score_threshold,
                            .box_nms = gpu::RowFilter::BoxNms{.objectness = objectness,
                                                              .iou_threshold = iou_threshold,
                                                              .max_detections = max_detections,
                                                              .per_class = true},
                            .channel_major = !objectness,
                            .column_end = objectness ? 0 : gpu::RowFilter::kThroughLastColumn};
    }
    case DetectorFamily::kBlazeFace:
      break;
  }
  return std::nullopt;
}

}  // namespace edgefuse
