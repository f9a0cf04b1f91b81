#include "tests/gpu/grid_rows.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "models/detect/blazeface_decode.h"
#include "models/detect/nms.h"
#include "models/detect/yolov5_decode.h"
#include "models/detect/yolov8_decode.h"
#include "models/detect/yolox_decode.h"
#include "tests/fusion/fusion_test_graphs.h"

namespace edgefuse::test {

Tensor synthetic_grid_rows(const GridRowsSpec& spec, float threshold, std::mt19937& rng) {
  const int64_t rows = yolo_cell_count(spec.width, spec.height), channels = kYoloxBoxChannels + spec.classes;
  Tensor t = Tensor::empty(DType::kF32, {spec.batch, rows, channels});
  std::uniform_real_distribution<float> unit(0.0f, 1.0f), offset(-1.0f, 2.0f), log_size(1.0f, 3.0f);
  float* data = t.data<float>();
  for (int64_t r = 0; r < spec.batch * rows; ++r) {
    float* row = data + r * channels;
    row[0] = offset(rng);
    row[1] = offset(rng);
    row[2] = unit(rng) < 0.02f ? -30.0f : log_size(rng);
    row[3] = log_size(rng);
    const bool selected = unit(rng) < spec.selected_fraction;
    row[4] = selected ? threshold + (1 - threshold) * unit(rng) : threshold * unit(rng);
    for (int64_t k = 0; k < spec.classes; ++k) row[kYoloxBoxChannels + k] = unit(rng);
    if (selected && r >= 50 && r % 10 == 0) std::copy(row - 50 * channels + 4, row - 49 * channels, row + 4);
  }
  return t;
}

std::shared_ptr<const Graph> pass_through_graph(const Shape& shape) {
  GraphMaker m;
  m.output(m.node(OpKind::kAdd, {m.input(shape), m.constant(Tensor::from_vector<float>({1}, {0.0f}))}));
  return std::make_shared<const Graph>(std::move(m.graph()));
}

std::vector<Detection> grid_detections(const Tensor& rows, int64_t b, int width, int height,
                                       const NmsSettings& settings) {
  const int64_t anchors = rows.dim(1), channels = rows.dim(2);
  DecodeResult decoded = decode_yolox(rows.data<float>() + b * anchors * channels, anchors, channels, width, height,
                                      settings.score_threshold);
  REQUIRE_MESSAGE(decoded.error.empty(), decoded.error);
  return settings.per_class
             ? nms_per_class(std::move(decoded.detections), settings.iou_threshold, settings.max_detections)
             : nms_class_agnostic(std::move(decoded.detections), settings.iou_threshold, settings.max_detections);
}

int64_t rows_back(const Tensor& rows, int64_t b, int64_t column, float left_behind) {
  const int64_t anchors = rows.dim(1), channels = rows.dim(2);
  const float* data = rows.data<float>() + b * anchors * channels;
  int64_t count = 0;
  for (int64_t r = 0; r < anchors; ++r) count += data[r * channels + column] != left_behind ? 1 : 0;
  return count;
}

Tensor synthetic_box_rows(const BoxRowsSpec& spec, float threshold, std::mt19937& rng) {
  const int64_t first_class = spec.objectness ? 5 : 4, channels = first_class + spec.classes;
  std::vector<float> rows(static_cast<size_t>(spec.batch * spec.rows * channels));
  std::uniform_real_distribution<float> unit(0.0f, 1.0f), centre(0.0f, 320.0f), extent(16.0f, 96.0f);
  std::uniform_int_distribution<int64_t> any_class(0, spec.classes - 1);
  for (int64_t r = 0; r < spec.batch * spec.rows; ++r) {
    float* row = rows.data() + r * channels;
    row[0] = centre(rng);
    row[1] = centre(rng);
    row[2] = unit(rng) < 0.02f ? -extent(rng) : extent(rng);
    row[3] = extent(rng);
    const bool selected = unit(rng) < spec.selected_fraction;
    for (int64_t k = 0; k < spec.classes; ++k)
      row[first_class + k] = spec.objectness ? unit(rng) : threshold * unit(rng);
    if (spec.objectness) {
      row[4] = selected ? threshold + (1 - threshold) * unit(rng) : threshold * unit(rng);
    } else if (selected) {
      row[first_class + any_class(rng)] = unit(rng) < 0.05f ? threshold : threshold + (1 - threshold) * unit(rng);
    }
    if (selected && r % spec.rows >= 50 && r % 10 == 0) {
      std::copy(row - 50 * channels + 4, row - 49 * channels, row + 4);
    }
  }
  if (spec.objectness) return Tensor::from_vector<float>({spec.batch, spec.rows, channels}, rows);
  Tensor t = Tensor::empty(DType::kF32, {spec.batch, channels, spec.rows});
  float* columns = t.data<float>();
  for (int64_t b = 0; b < spec.batch; ++b) {
    for (int64_t r = 0; r < spec.rows; ++r) {
      for (int64_t c = 0; c < channels; ++c) {
        columns[(b * channels + c) * spec.rows + r] = rows[static_cast<size_t>((b * spec.rows + r) * channels + c)];
      }
    }
  }
  return t;
}

std::vector<Detection> box_detections(const Tensor& output, int64_t b, bool objectness, const NmsSettings& settings) {
  const int64_t element = output.dim(1) * output.dim(2);
  const float* data = output.data<float>() + b * element;
  DecodeResult decoded = objectness ? decode_yolov5(data, output.dim(1), output.dim(2), settings.score_threshold)
                                    : decode_yolov8(data, output.dim(1), output.dim(2), settings.score_threshold);
  REQUIRE_MESSAGE(decoded.error.empty(), decoded.error);
  return settings.per_class
             ? nms_per_class(std::move(decoded.detections), settings.iou_threshold, settings.max_detections)
             : nms_class_agnostic(std::move(decoded.detections), settings.iou_threshold, settings.max_detections);
}

int64_t box_rows_back(const Tensor& output, int64_t b, bool objectness) {
  if (objectness) return rows_back(output, b, 0);
  const int64_t rows = output.dim(2);
  const float* cx = output.data<float>() + b * output.dim(1) * rows;  // channel 0 of every row
  return static_cast<int64_t>(std::count_if(cx, cx + rows, [](float v) { return v != 0.0f; }));
}

Tensor synthetic_anchor_rows(int64_t batch, int input_size, float threshold, float selected_fraction,
                             std::mt19937& rng) {
  const int64_t rows = kBlazeFaceAnchorCount, channels = kBlazeFaceRowChannels;
  Tensor t = Tensor::empty(DType::kF32, {batch, rows, channels});
  const auto size = static_cast<float>(input_size);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f), offset(-size / 16, size / 16), extent(size / 8, size / 3);
  const auto logit = [](double p) { return static_cast<float>(std::log(p) - std::log1p(-p)); };
  const float at_threshold = logit(threshold);
  float* data = t.data<float>();
  for (int64_t r = 0; r < batch * rows; ++r) {
    float* row = data + r * channels;
    const bool selected = unit(rng) < selected_fraction;
    const float u = unit(rng);
    if (u < 0.05f) {  // within 4 ulps of the threshold's logit, either side
      row[0] = at_threshold;
      for (int step = static_cast<int>(unit(rng) * 9) - 4; step != 0; step += step > 0 ? -1 : 1) {
        row[0] = std::nextafter(row[0], step > 0 ? INFINITY : -INFINITY);
      }
    } else {
      row[0] = selected ? logit(threshold + (1 - threshold) * (0.01 + 0.98 * u)) : logit(threshold * (0.01 + 0.98 * u));
    }
    row[1] = offset(rng);
    row[2] = offset(rng);
    row[3] = unit(rng) < 0.02f ? -extent(rng) : extent(rng);
    row[4] = extent(rng);
    for (int64_t k = 5; k < channels; ++k) row[k] = offset(rng);
    if (selected && r % rows >= 50 && r % 10 == 0) row[0] = row[-50 * channels];
  }
  return t;
}

std::vector<Detection> anchor_detections(const Tensor& rows, int64_t b, int input_size, const NmsSettings& settings) {
  const int64_t anchors = rows.dim(1), channels = rows.dim(2);
  DecodeResult decoded = decode_blazeface_rows(rows.data<float>() + b * anchors * channels, anchors, channels,
                                               blazeface_anchors(input_size), settings.score_threshold);
  REQUIRE_MESSAGE(decoded.error.empty(), decoded.error);
  return nms_class_agnostic(std::move(decoded.detections), settings.iou_threshold, settings.max_detections);
}

}  // namespace edgefuse::test
