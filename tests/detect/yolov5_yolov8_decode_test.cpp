#include <doctest/doctest.h>

#include <vector>

#include "models/detect/yolov5_decode.h"
#include "models/detect/yolov8_decode.h"

using namespace edgefuse;

namespace {

constexpr int kClasses = 3;

void check_box(const Detection& d, float x1, float y1, float x2, float y2) {
  CHECK(d.box.x1 == doctest::Approx(x1));
  CHECK(d.box.y1 == doctest::Approx(y1));
  CHECK(d.box.x2 == doctest::Approx(x2));
  CHECK(d.box.y2 == doctest::Approx(y2));
}

}  // namespace

TEST_CASE("yolov5_row_count is three rows a cell of the strides 8, 16, 32 grids") {
  CHECK(yolov5_row_count(640, 640) == 25200);
  CHECK(yolov5_row_count(416, 416) == 3 * 3549);
  CHECK(yolo_cell_count(640, 640) == 8400);
}

TEST_CASE("decode_yolov5 reads pixel boxes and scores objectness x best class") {
  constexpr int64_t kChannels = kYolov5BoxChannels + kClasses;
  constexpr int64_t kRows = 4;
  std::vector<float> output(kRows * kChannels, 0.0f);
  auto set_row = [&](int64_t r, std::vector<float> values) {
    std::copy(values.begin(), values.end(), output.begin() + r * kChannels);
  };
  set_row(0, {100, 50, 40, 20, 0.9f, 0.1f, 0.8f, 0.8f});  // classes 1 and 2 tie: the first wins; 0.72
  set_row(1, {10, 10, 4, 4, 0.2f, 1.0f, 0, 0});           // objectness below the threshold
  set_row(2, {30, 30, 10, 10, 0.9f, 0.5f, 0.4f, 0.3f});   // 0.45: below 0.5
  set_row(3, {300, 200, 60, 80, 1.0f, 0, 0, 0.55f});      // 0.55, class 2
  const DecodeResult result = decode_yolov5(output.data(), kRows, kChannels, 0.5f);
  REQUIRE(result.ok());
  REQUIRE(result.detections.size() == 2);
  check_box(result.detections[0], 80, 40, 120, 60);
  CHECK(result.detections[0].score == doctest::Approx(0.72f));
  CHECK(result.detections[0].class_id == 1);
  check_box(result.detections[1], 270, 160, 330, 240);
  CHECK(result.detections[1].score == doctest::Approx(0.55f));
  CHECK(result.detections[1].class_id == 2);
  CHECK(decode_yolov5(output.data(), kRows, kChannels, 0.4f).detections.size() == 3);
}

TEST_CASE("decode_yolov8 reads channel-major outputs with no objectness") {
  constexpr int64_t kChannels = kYolov8BoxChannels + kClasses;
  constexpr int64_t kAnchors = 3;
  std::vector<float> output(kChannels * kAnchors, 0.0f);
  auto set_anchor = [&](int64_t a, std::vector<float> values) {
    for (int64_t c = 0; c < kChannels; ++c) output[c * kAnchors + a] = values[c];
  };
  set_anchor(0, {100, 50, 40, 20, 0.2f, 0.7f, 0.7f});  // tie between classes 1 and 2: class 1
  set_anchor(1, {10, 10, 4, 4, 0.49f, 0.1f, 0.3f});    // best 0.49: below 0.5
  set_anchor(2, {300, 200, 60, 80, 0.95f, 0.1f, 0.2f});
  const DecodeResult result = decode_yolov8(output.data(), kChannels, kAnchors, 0.5f);
  REQUIRE(result.ok());
  REQUIRE(result.detections.size() == 2);
  check_box(result.detections[0], 80, 40, 120, 60);
  CHECK(result.detections[0].score == doctest::Approx(0.7f));
  CHECK(result.detections[0].class_id == 1);
  check_box(result.detections[1], 270, 160, 330, 240);
  CHECK(result.detections[1].score == doctest::Approx(0.95f));
  CHECK(result.detections[1].class_id == 0);
  CHECK(decode_yolov8(output.data(), kChannels, kAnchors, 0.45f).detections.size() == 3);
}

TEST_CASE("YOLOv5 and YOLOv8 decoding reject dims that cannot hold a box and a class") {
  const std::vector<float> output(64, 0.0f);
  const DecodeResult v5_narrow = decode_yolov5(output.data(), 4, 5, 0.5f);
  CHECK_FALSE(v5_narrow.ok());
  CHECK(v5_narrow.error.find("5 channels") != std::string::npos);
  CHECK_FALSE(decode_yolov5(output.data(), 0, 8, 0.5f).ok());
  const DecodeResult v8_narrow = decode_yolov8(output.data(), 4, 8, 0.5f);
  CHECK_FALSE(v8_narrow.ok());
  CHECK(v8_narrow.error.find("4 channels") != std::string::npos);
  CHECK_FALSE(decode_yolov8(output.data(), 8, 0, 0.5f).ok());
}
