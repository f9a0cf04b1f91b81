// Synthetic detector outputs in YOLOX's row layout and in BlazeFace's merged anchor rows, for the
// device NMS tests (host emulation in tests/gpu, device runs in tests/cuda): boxes that overlap
// their neighbours, equal scores, rows on both sides of the threshold; and the CPU's decoding and
// NMS of them, the reference.
#pragma once

#include <memory>
#include <random>
#include <vector>

#include "models/detect/detection.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace edgefuse::test {

struct GridRowsSpec {
  int64_t batch = 1;
  int width = 0, height = 0;  // the input the grid cells (strides 8, 16, 32) tile
  int64_t classes = 3;
  float selected_fraction = 0.4f;  // rows with objectness at or above the threshold
};

// [batch, cells, 5 + classes]: boxes of 3 to 20 cells; every tenth selected row from the 50th on
// copies the scores of the row 50 before it (equal scores); 2 % of the boxes are empty.
Tensor synthetic_grid_rows(const GridRowsSpec& spec, float threshold, std::mt19937& rng);

// A graph whose one output is its input plus 0: the rows as a graph output, bit for bit.
std::shared_ptr<const Graph> pass_through_graph(const Shape& shape);

struct NmsSettings {
  float score_threshold = 0.3f;
  float iou_threshold = 0.45f;
  int max_detections = 0;  // <= 0: all
  bool per_class = true;
};

// Batch element b of `rows` decoded for a width x height input (decode_yolox), then NMS.
std::vector<Detection> grid_detections(const Tensor& rows, int64_t b, int width, int height,
                                       const NmsSettings& settings);

// Rows of batch element b that came back from a row filter: those whose filtered column (YOLOX's
// objectness, BlazeFace's logit) is not what the rows left behind read as.
int64_t rows_back(const Tensor& rows, int64_t b, int64_t column = 4, float left_behind = 0.0f);

// Boxes the graph decoded already: [batch, rows, 5 + classes] YOLOv5 rows (cx, cy, w, h in pixels
// of a 320 x 320 input, objectness, class scores) or, without objectness, [batch, 4 + classes,
// rows] YOLOv8 columns (channel-major). Boxes of 16 to 96 pixels, so neighbours overlap; a
// `selected_fraction` of the rows pass the filter (YOLOv5: objectness at or above `threshold`;
// YOLOv8: one class score at or above it, one row in 20 of them exactly at it); every tenth
// selected row from the 50th on copies the scores of the row 50 before it (equal scores); 2 % of
// the boxes have a negative width (empty).
struct BoxRowsSpec {
  int64_t batch = 1;
  int64_t rows = 1000;
  int64_t classes = 3;
  bool objectness = true;  // YOLOv5; false: YOLOv8
  float selected_fraction = 0.4f;
};
Tensor synthetic_box_rows(const BoxRowsSpec& spec, float threshold, std::mt19937& rng);

// Batch element b of such an output decoded (decode_yolov5 or decode_yolov8), then NMS.
std::vector<Detection> box_detections(const Tensor& output, int64_t b, bool objectness, const NmsSettings& settings);

// Rows of batch element b of such an output that came back from a row filter (their cx is not 0).
int64_t box_rows_back(const Tensor& output, int64_t b, bool objectness);

// [batch, 896, 17] BlazeFace rows (models/detector/blazeface_rows.h) for an input_size square
// input: boxes of 1/8 to 1/3 of the input around their anchors, so neighbours overlap; a
// `selected_fraction` of the rows score at or above `threshold`, some of them within a few ulps
// of it on either side; every tenth selected row from the 50th on copies the logit of the row 50
// before it (equal scores); 2 % of the boxes have a negative width (empty).
Tensor synthetic_anchor_rows(int64_t batch, int input_size, float threshold, float selected_fraction,
                             std::mt19937& rng);

// Batch element b of BlazeFace rows decoded (decode_blazeface_rows), then NMS across classes.
std::vector<Detection> anchor_detections(const Tensor& rows, int64_t b, int input_size, const NmsSettings& settings);

}  // namespace edgefuse::test
