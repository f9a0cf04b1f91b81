// Detections on real photos: the Detector (our runtime, optimised kernels) against the reference
// pipeline (OpenCV DNN on the same letterboxed input, then the same decode and NMS). Each of our
// detections must match a reference detection of the same class at IoU >= 0.9 and vice versa.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "models/detect/labels.h"
#include "models/detect/nms.h"
#include "models/detector/detector.h"
#include "models/detector/preprocess.h"
#include "tests/models/model_fixtures.h"
#include "tests/support/assets.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

constexpr float kScoreThreshold = 0.3f;
constexpr float kIouThreshold = 0.45f;
constexpr float kMatchIou = 0.9f;

// True when every detection of `a` has a same-class partner in `b` with IoU >= kMatchIou.
void check_all_matched(const std::vector<Detection>& a, const std::vector<Detection>& b, const char* what) {
  for (const Detection& d : a) {
    const bool matched = std::any_of(b.begin(), b.end(), [&](const Detection& other) {
      return other.class_id == d.class_id && iou(other.box, d.box) >= kMatchIou;
    });
    CHECK_MESSAGE(matched, what << ": class " << d.class_id << " score " << d.score << " box (" << d.box.x1 << ", "
                                << d.box.y1 << ", " << d.box.x2 << ", " << d.box.y2 << ") has no partner");
  }
}

Detector make_detector(LoadedModel& model, DetectorFamily family) {
  DetectorOptions options;
  options.score_threshold = kScoreThreshold;
  options.iou_threshold = kIouThreshold;
  Result<Detector> detector = Detector::create(model.graph, family, options);
  REQUIRE_MESSAGE(detector.is_ok(), detector.status().to_string());
  return std::move(detector).value();
}

}  // namespace

TEST_CASE("YOLOX-nano detections on the sample photos match the OpenCV DNN pipeline") {
  ASSET_OR_SKIP(model_path, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(labels_path, "models/coco.names");
  const std::optional<std::vector<std::string>> labels = read_labels(labels_path.string());
  REQUIRE(labels.has_value());
  REQUIRE(labels->size() == 80);
  LoadedModel& model = load_model(model_path);
  REQUIRE_MESSAGE(model.graph != nullptr, "import failed: " << model.import_error);
  REQUIRE_MESSAGE(!model.opencv.empty(), "OpenCV DNN could not read the model: " << model.opencv_error);
  Detector detector = make_detector(model, DetectorFamily::kYolox);

  for (const PhotoObjects& photo : coco_photo_objects()) {
    const std::string file = photo.file;
    CAPTURE(file);
    ASSET_OR_SKIP(image_path, photo.file);
    const cv::Mat image = read_image(image_path);
    REQUIRE(!image.empty());

    Result<std::vector<Detection>> ours = detector.detect(image);
    REQUIRE_MESSAGE(ours.is_ok(), ours.status().to_string());
    Result<PreprocessedImage> input = preprocess_yolox(image, detector.input_width(), detector.input_height());
    REQUIRE(input.is_ok());
    const std::vector<Detection> reference =
        reference_yolox_detections(model, *input, image, kScoreThreshold, kIouThreshold);

    const std::multiset<std::string> names = class_names(*ours, *labels);
    std::string found;
    for (const std::string& name : names) found += name + " ";
    MESSAGE(file << ": " << found);
    check_all_matched(*ours, reference, "ours vs reference");
    check_all_matched(reference, *ours, "reference vs ours");
    check_photo_objects(names, photo);
    for (const Detection& d : *ours) {
      CHECK(d.score >= kScoreThreshold);
      CHECK(d.box.x1 >= 0);
      CHECK(d.box.y1 >= 0);
      CHECK(d.box.x2 <= static_cast<float>(image.cols));
      CHECK(d.box.y2 <= static_cast<float>(image.rows));
      CHECK(d.keypoints.empty());
    }
  }
}

TEST_CASE("BlazeFace back-256 finds the head in person.jpg like the OpenCV DNN pipeline") {
  ASSET_OR_SKIP(model_path, "models/blazeface_back_256.onnx");
  ASSET_OR_SKIP(image_path, "data/images/person.jpg");
  LoadedModel& model = load_model(model_path);
  REQUIRE_MESSAGE(model.graph != nullptr, "import failed: " << model.import_error);
  REQUIRE_MESSAGE(!model.opencv.empty(), "OpenCV DNN could not read the model: " << model.opencv_error);
  Detector detector = make_detector(model, DetectorFamily::kBlazeFace);
  REQUIRE(detector.input_width() == 256);
  const cv::Mat image = read_image(image_path);
  REQUIRE(!image.empty());

  Result<std::vector<Detection>> ours = detector.detect(image);
  REQUIRE_MESSAGE(ours.is_ok(), ours.status().to_string());
  Result<PreprocessedImage> input = preprocess_blazeface(image, 256);
  REQUIRE(input.is_ok());
  const std::vector<Detection> reference =
      reference_blazeface_detections(model, *input, image, kScoreThreshold, kIouThreshold);
  check_all_matched(*ours, reference, "ours vs reference");
  check_all_matched(reference, *ours, "reference vs ours");

  // The person stands with their back turned; the detector's best box sits on the head, centred
  // near (232, 122) in the 640x424 photo.
  REQUIRE(!ours->empty());
  const Detection& best = ours->front();
  CHECK(best.score >= 0.5f);
  CHECK((best.box.x1 + best.box.x2) / 2 == doctest::Approx(232).epsilon(0.05));
  CHECK((best.box.y1 + best.box.y2) / 2 == doctest::Approx(122).epsilon(0.08));
  CHECK(best.class_id == 0);
  CHECK(best.keypoints.size() == 6);
}

TEST_CASE("Detector reports bad images and family mismatches") {
  ASSET_OR_SKIP(model_path, "models/yolox_nano.onnx");
  LoadedModel& model = load_model(model_path);
  REQUIRE_MESSAGE(model.graph != nullptr, "import failed: " << model.import_error);

  Result<Detector> wrong_family = Detector::create(model.graph, DetectorFamily::kBlazeFace);
  CHECK_FALSE(wrong_family.is_ok());
  CHECK(wrong_family.status().code() == StatusCode::kInvalidModel);
  CHECK(wrong_family.status().message().find("BlazeFace") != std::string::npos);

  DetectorOptions bad_threshold;
  bad_threshold.score_threshold = 1.5f;
  CHECK(Detector::create(model.graph, DetectorFamily::kYolox, bad_threshold).status().code() ==
        StatusCode::kInvalidArgument);

  Detector detector = make_detector(model, DetectorFamily::kYolox);
  CHECK(detector.detect(cv::Mat()).status().code() == StatusCode::kInvalidArgument);
  const cv::Mat gray(32, 32, CV_8UC1, cv::Scalar(0));
  Result<std::vector<Detection>> gray_result = detector.detect(gray);
  CHECK_FALSE(gray_result.is_ok());
  CHECK(gray_result.status().message().find("CV_8UC3") != std::string::npos);
}
