// The YOLOv5 and YOLOv8 families on real photos. No trained model of either ships with the shared
// assets, so YOLOX-nano re-dressed as each (tests/models/yolo_redress.h) stands in: the same network
// behind the family's input and output. Its raw outputs must equal YOLOX's, re-dressed in float64,
// and its detections, through the family's preprocessing and decoder, those of YOLOX.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "models/detect/labels.h"
#include "models/detect/nms.h"
#include "models/detect/yolo_grid.h"
#include "models/detector/detector.h"
#include "models/detector/preprocess.h"
#include "models/onnx/onnx_importer.h"
#include "runtime/executor.h"
#include "tests/models/model_fixtures.h"
#include "tests/models/yolo_redress.h"
#include "tests/support/assets.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

constexpr int kSize = 416;
constexpr int64_t kYoloxChannels = 85;
constexpr double kMaxRelativeL2 = 1e-5;
// Detections scoring at least kConfident in one detector must have a same-class partner at IoU >=
// kMatchIou in the other (measured: see the test's messages).
constexpr float kConfident = 0.5f;
constexpr float kMatchIou = 0.75f;

// The re-dressed model, imported once per process (empty when YOLOX-nano is absent).
std::shared_ptr<const Graph> redressed_graph(RedressAs as) {
  static std::map<RedressAs, std::shared_ptr<const Graph>> graphs;
  if (auto it = graphs.find(as); it != graphs.end()) return it->second;
  const std::filesystem::path yolox = find_asset("models/yolox_nano.onnx");
  if (yolox.empty()) return nullptr;
  const std::string bytes = redress_yolox_file(yolox, as);
  REQUIRE_MESSAGE(!bytes.empty(), "cannot re-dress " << yolox.string());
  Result<std::shared_ptr<Graph>> graph = import_onnx_bytes(bytes, "");
  REQUIRE_MESSAGE(graph.is_ok(), graph.status().to_string());
  return graphs[as] = *graph;
}

std::vector<Tensor> run(std::shared_ptr<const Graph> graph, const Tensor& input) {
  Result<Executor> executor = Executor::create(std::move(graph));
  REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
  Result<std::vector<Tensor>> outputs = executor->run(std::span<const Tensor>(&input, 1));
  REQUIRE_MESSAGE(outputs.is_ok(), outputs.status().to_string());
  return std::move(outputs).value();
}

// YOLOX's input (BGR, 0..255) as the Ultralytics families take it (RGB, v / 255): the same pixels.
Tensor ultralytics_input_from_yolox(const Tensor& yolox_input) {
  Tensor out = Tensor::empty(DType::kF32, yolox_input.shape());
  const int64_t plane = yolox_input.numel() / 3;
  const float* bgr = yolox_input.data<float>();
  float* rgb = out.data<float>();
  for (int64_t c = 0; c < 3; ++c) {
    for (int64_t i = 0; i < plane; ++i) rgb[c * plane + i] = bgr[(2 - c) * plane + i] / 255.0f;
  }
  return out;
}

// YOLOX's raw [1, cells, 85] output decoded and laid out as the family's output, in float64.
Tensor redress_in_float64(const Tensor& raw, RedressAs as) {
  const int64_t cells = raw.dim(1);
  std::vector<std::vector<double>> rows;  // per cell: cx, cy, w, h, objectness, class scores
  const float* in = raw.data<float>();
  for (int stride : kYoloStrides) {
    const int grid = kSize / stride;
    for (int gy = 0; gy < grid; ++gy) {
      for (int gx = 0; gx < grid; ++gx, in += kYoloxChannels) {
        std::vector<double> row(in, in + kYoloxChannels);
        row[0] = (row[0] + gx) * stride;
        row[1] = (row[1] + gy) * stride;
        row[2] = std::exp(row[2]) * stride;
        row[3] = std::exp(row[3]) * stride;
        rows.push_back(std::move(row));
      }
    }
  }
  if (as == RedressAs::kYolov5) {
    Tensor out = Tensor::empty(DType::kF64, {1, 3 * cells, kYoloxChannels});
    double* dst = out.data<double>();
    int64_t begin = 0;
    for (int stride : kYoloStrides) {
      const int64_t level = static_cast<int64_t>(kSize / stride) * (kSize / stride);
      for (int anchor = 0; anchor < 3; ++anchor) {
        for (int64_t r = begin; r < begin + level; ++r) dst = std::copy(rows[r].begin(), rows[r].end(), dst);
      }
      begin += level;
    }
    return out;
  }
  Tensor out = Tensor::empty(DType::kF64, {1, kYoloxChannels - 1, cells});
  double* dst = out.data<double>();
  for (int64_t r = 0; r < cells; ++r) {
    for (int64_t c = 0; c < 4; ++c) dst[c * cells + r] = rows[r][c];
    for (int64_t c = 5; c < kYoloxChannels; ++c) dst[(c - 1) * cells + r] = rows[r][4] * rows[r][c];
  }
  return out;
}

Detector make_detector(std::shared_ptr<const Graph> graph, DetectorFamily family) {
  DetectorOptions options;
  options.score_threshold = 0.3f;
  options.iou_threshold = 0.45f;
  Result<Detector> detector = Detector::create(std::move(graph), family, options);
  REQUIRE_MESSAGE(detector.is_ok(), detector.status().to_string());
  return std::move(detector).value();
}

// The lowest IoU between a detection of `a` scoring at least min_score and its best same-class
// partner in `b` (0 when one has none).
float worst_partner_iou(const std::vector<Detection>& a, const std::vector<Detection>& b, float min_score) {
  float worst = 1;
  for (const Detection& d : a) {
    if (d.score < min_score) continue;
    float best = 0;
    for (const Detection& other : b) {
      if (other.class_id == d.class_id) best = std::max(best, iou(other.box, d.box));
    }
    worst = std::min(worst, best);
  }
  return worst;
}

const std::pair<RedressAs, DetectorFamily> kFamilies[] = {{RedressAs::kYolov5, DetectorFamily::kYolov5},
                                                          {RedressAs::kYolov8, DetectorFamily::kYolov8}};

}  // namespace

TEST_CASE("YOLOX-nano re-dressed as YOLOv5 and YOLOv8 is recognised as such and takes their input") {
  ASSET_OR_SKIP(yolox_path, "models/yolox_nano.onnx");
  for (const auto& [as, family] : kFamilies) {
    CAPTURE(family_name(family));
    const std::shared_ptr<const Graph> graph = redressed_graph(as);
    Result<DetectorFamily> recognised = recognise_family(*graph);
    REQUIRE_MESSAGE(recognised.is_ok(), recognised.status().to_string());
    CHECK(*recognised == family);
    // The other YOLO families name what does not fit.
    for (DetectorFamily other : kDetectorFamilies) {
      if (other == family) continue;
      CHECK(Detector::create(graph, other).status().code() == StatusCode::kInvalidModel);
    }
    const ModelInputSpec spec = make_detector(graph, family).input_spec();
    CHECK(spec.width == kSize);
    CHECK(spec.height == kSize);
    CHECK(spec.layout == TensorLayout::kNCHW);
    CHECK(spec.channels == ChannelOrder::kRGB);
    CHECK(spec.scale == doctest::Approx(1.0 / 255));
    CHECK(spec.pad_pixel == 114);
    CHECK(spec.centre);
  }
}

TEST_CASE("the re-dressed outputs equal YOLOX's re-dressed in float64") {
  ASSET_OR_SKIP(yolox_path, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(image_path, "data/images/dog.jpg");
  const cv::Mat image = read_image(image_path);
  REQUIRE(!image.empty());
  Result<PreprocessedImage> yolox_input = preprocess_yolox(image, kSize, kSize);
  REQUIRE(yolox_input.is_ok());
  const LoadedModel& yolox = load_model(yolox_path);
  REQUIRE_MESSAGE(yolox.graph != nullptr, "import failed: " << yolox.import_error);
  const std::vector<Tensor> raw = run(yolox.graph, yolox_input->input);
  const Tensor input = ultralytics_input_from_yolox(yolox_input->input);
  for (const auto& [as, family] : kFamilies) {
    CAPTURE(family_name(family));
    const std::vector<Tensor> actual = run(redressed_graph(as), input);
    REQUIRE(actual.size() == 1);
    const Tensor expected = redress_in_float64(raw[0], as);
    REQUIRE(actual[0].shape() == expected.shape());
    const ErrorStats error = compare_tensors(actual[0], expected);
    MESSAGE(family_name(family), " output against YOLOX re-dressed in float64: ", error.to_string());
    CHECK(error.relative_l2 <= kMaxRelativeL2);
    CHECK(error.mismatched_nan == 0);
  }
}

TEST_CASE("YOLOv5 and YOLOv8 detectors find in the sample photos what YOLOX finds") {
  ASSET_OR_SKIP(yolox_path, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(labels_path, "models/coco.names");
  const std::optional<std::vector<std::string>> labels = read_labels(labels_path.string());
  REQUIRE(labels.has_value());
  const LoadedModel& yolox_model = load_model(yolox_path);
  REQUIRE_MESSAGE(yolox_model.graph != nullptr, "import failed: " << yolox_model.import_error);
  Detector yolox = make_detector(yolox_model.graph, DetectorFamily::kYolox);

  for (const auto& [as, family] : kFamilies) {
    CAPTURE(family_name(family));
    Detector detector = make_detector(redressed_graph(as), family);
    for (const PhotoObjects& photo : coco_photo_objects()) {
      const std::string file = photo.file;
      CAPTURE(file);
      ASSET_OR_SKIP(image_path, photo.file);
      const cv::Mat image = read_image(image_path);
      REQUIRE(!image.empty());
      Result<std::vector<Detection>> ours = detector.detect(image);
      Result<std::vector<Detection>> reference = yolox.detect(image);
      REQUIRE_MESSAGE(ours.is_ok(), ours.status().to_string());
      REQUIRE(reference.is_ok());
      check_photo_objects(class_names(*ours, *labels), photo);
      // The same network on the same photo, letterboxed centred rather than at the top-left: the
      // confident objects of either must be found by the other at nearly the same place.
      const float ours_in_reference = worst_partner_iou(*ours, *reference, kConfident);
      const float reference_in_ours = worst_partner_iou(*reference, *ours, kConfident);
      MESSAGE(family_name(family), " ", file, ": ", ours->size(), " detections (YOLOX ", reference->size(),
              "), worst IoU with YOLOX's ", ours_in_reference, " / ", reference_in_ours);
      CHECK(ours_in_reference >= kMatchIou);
      CHECK(reference_in_ours >= kMatchIou);
      for (const Detection& d : *ours) {
        CHECK(d.score >= 0.3f);
        CHECK(d.box.x1 >= 0);
        CHECK(d.box.y1 >= 0);
        CHECK(d.box.x2 <= static_cast<float>(image.cols));
        CHECK(d.box.y2 <= static_cast<float>(image.rows));
      }
    }
  }
}
