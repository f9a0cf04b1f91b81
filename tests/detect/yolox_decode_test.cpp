#include "models/detect/yolox_decode.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace edgefuse;

namespace {

constexpr int kClasses = 3;
constexpr int64_t kChannels = kYoloxBoxChannels + kClasses;

// A 64x32 input: strides 8, 16, 32 give 8x4, 4x2 and 2x1 grids, 32 + 8 + 2 = 42 cells.
constexpr int kWidth = 64;
constexpr int kHeight = 32;

struct Cell {
  int64_t index;  // row in the output
  int stride, gx, gy;
};

std::vector<float> zero_output() {
  return std::vector<float>(static_cast<size_t>(42 * kChannels), 0.0f);
}

void set_cell(std::vector<float>& output, int64_t index, float dx, float dy, float log_w, float log_h, float obj,
              int cls, float cls_score) {
  float* row = output.data() + index * kChannels;
  row[0] = dx;
  row[1] = dy;
  row[2] = log_w;
  row[3] = log_h;
  row[4] = obj;
  row[kYoloxBoxChannels + cls] = cls_score;
}

}  // namespace

TEST_CASE("yolo_cell_count sums the grids of strides 8, 16 and 32") {
  CHECK(yolo_cell_count(416, 416) == 3549);
  CHECK(yolo_cell_count(kWidth, kHeight) == 42);
  CHECK(yolo_cell_count(640, 480) == 80 * 60 + 40 * 30 + 20 * 15);
}

TEST_CASE("a single hot cell at every stride level decodes to its box in input pixels") {
  // The last cell of each level: (gx, gy) = (grid_w - 1, grid_h - 1); row index counts the
  // cells of earlier levels first, then gy * grid_w + gx.
  const Cell cells[] = {{31, 8, 7, 3}, {32 + 7, 16, 3, 1}, {40 + 1, 32, 1, 0}, {32 + 4 + 1, 16, 1, 1}, {0, 8, 0, 0}};
  for (const Cell& cell : cells) {
    CAPTURE(cell.index);
    std::vector<float> output = zero_output();
    // dx 0.25, dy 0.75, w = e^0 * s = s, h = e^ln2 * s = 2s; score 0.8 * 0.9 = 0.72 for class 2.
    set_cell(output, cell.index, 0.25f, 0.75f, 0.0f, std::log(2.0f), 0.8f, 2, 0.9f);
    const DecodeResult result = decode_yolox(output.data(), 42, kChannels, kWidth, kHeight, 0.5f);
    REQUIRE(result.ok());
    REQUIRE(result.detections.size() == 1);
    const Detection& d = result.detections[0];
    const double s = cell.stride;
    const double cx = (0.25 + cell.gx) * s;
    const double cy = (0.75 + cell.gy) * s;
    CHECK(d.box.x1 == doctest::Approx(cx - 0.5 * s));
    CHECK(d.box.x2 == doctest::Approx(cx + 0.5 * s));
    CHECK(d.box.y1 == doctest::Approx(cy - s));
    CHECK(d.box.y2 == doctest::Approx(cy + s));
    CHECK(d.score == doctest::Approx(0.72));
    CHECK(d.class_id == 2);
    CHECK(d.keypoints.empty());
  }
}

TEST_CASE("decode_yolox keeps the best class per cell and applies the threshold to obj * class") {
  std::vector<float> output = zero_output();
  set_cell(output, 3, 0, 0, 0, 0, 0.9f, 0, 0.3f);
  set_cell(output, 3, 0, 0, 0, 0, 0.9f, 1, 0.6f);   // best class of cell 3: 0.54
  set_cell(output, 5, 0, 0, 0, 0, 0.5f, 2, 0.99f);  // 0.495: just below 0.5
  set_cell(output, 9, 0, 0, 0, 0, 0.4f, 0, 1.0f);   // objectness alone below the threshold

  const DecodeResult result = decode_yolox(output.data(), 42, kChannels, kWidth, kHeight, 0.5f);
  REQUIRE(result.ok());
  REQUIRE(result.detections.size() == 1);
  CHECK(result.detections[0].class_id == 1);
  CHECK(result.detections[0].score == doctest::Approx(0.54));

  const DecodeResult lower = decode_yolox(output.data(), 42, kChannels, kWidth, kHeight, 0.4f);
  REQUIRE(lower.ok());
  CHECK(lower.detections.size() == 3);  // in output order: cells 3, 5, 9
  CHECK(lower.detections[1].score == doctest::Approx(0.495));
  CHECK(lower.detections[2].score == doctest::Approx(0.4));
}

TEST_CASE("decode_yolox rejects dims that do not fit the input size") {
  std::vector<float> output = zero_output();
  const DecodeResult wrong_anchors = decode_yolox(output.data(), 41, kChannels, kWidth, kHeight, 0.5f);
  CHECK_FALSE(wrong_anchors.ok());
  CHECK(wrong_anchors.detections.empty());
  CHECK(wrong_anchors.error.find("41 anchors") != std::string::npos);
  CHECK(wrong_anchors.error.find("42 cells") != std::string::npos);

  const DecodeResult too_few_channels = decode_yolox(output.data(), 42, 5, kWidth, kHeight, 0.5f);
  CHECK_FALSE(too_few_channels.ok());
  CHECK(too_few_channels.error.find("5 channels") != std::string::npos);

  CHECK_FALSE(decode_yolox(output.data(), 0, kChannels, 0, kHeight, 0.5f).ok());
}
