#include "models/detect/blazeface_decode.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

using namespace edgefuse;

TEST_CASE("blazeface_anchors: 896 centres, 16x16x2 then 8x8x6, in input pixels") {
  const std::vector<Anchor> anchors = blazeface_anchors(128);
  REQUIRE(anchors.size() == 896);
  // First grid: cell 8 px at 128; both anchors of a cell share its centre.
  CHECK(anchors[0].cx == doctest::Approx(4));
  CHECK(anchors[0].cy == doctest::Approx(4));
  CHECK(anchors[1].cx == doctest::Approx(4));
  CHECK(anchors[2].cx == doctest::Approx(12));  // next column
  CHECK(anchors[32].cx == doctest::Approx(4));  // next row: 16 cells * 2 anchors
  CHECK(anchors[32].cy == doctest::Approx(12));
  CHECK(anchors[511].cx == doctest::Approx(124));
  CHECK(anchors[511].cy == doctest::Approx(124));
  // Second grid: cell 16 px, 6 anchors per cell.
  CHECK(anchors[512].cx == doctest::Approx(8));
  CHECK(anchors[512].cy == doctest::Approx(8));
  CHECK(anchors[517].cx == doctest::Approx(8));
  CHECK(anchors[518].cx == doctest::Approx(24));
  CHECK(anchors[895].cx == doctest::Approx(120));
  CHECK(anchors[895].cy == doctest::Approx(120));

  const std::vector<Anchor> back = blazeface_anchors(256);
  REQUIRE(back.size() == 896);
  CHECK(back[0].cx == doctest::Approx(8));
  CHECK(back[895].cy == doctest::Approx(240));
  CHECK(blazeface_anchors(0).empty());
}

TEST_CASE("a hot anchor decodes to its box and keypoints; sigmoid and threshold apply") {
  const std::vector<Anchor> anchors = blazeface_anchors(128);
  const std::span<const Anchor> second_head(anchors.data() + 512, 384);
  std::vector<float> scores(384, -10.0f);  // sigmoid(-10) ~ 4.5e-5
  std::vector<float> regressors(384 * 16, 0.0f);
  const int hot = 6 * (8 * 2 + 3) + 4;  // row 2, column 3, anchor 4: centre (56, 40)
  scores[hot] = std::log(0.9f / 0.1f);  // sigmoid -> 0.9
  float* reg = regressors.data() + hot * 16;
  reg[0] = 2;
  reg[1] = -4;
  reg[2] = 20;
  reg[3] = 30;
  for (int k = 0; k < 6; ++k) {
    reg[4 + 2 * k] = static_cast<float>(k);
    reg[5 + 2 * k] = -static_cast<float>(k);
  }

  const DecodeResult result = decode_blazeface(scores.data(), 384, regressors.data(), 16, second_head, 0.5f);
  REQUIRE(result.ok());
  REQUIRE(result.detections.size() == 1);
  const Detection& d = result.detections[0];
  CHECK(d.score == doctest::Approx(0.9));
  CHECK(d.class_id == 0);
  CHECK(d.box.x1 == doctest::Approx(56 + 2 - 10));
  CHECK(d.box.x2 == doctest::Approx(56 + 2 + 10));
  CHECK(d.box.y1 == doctest::Approx(40 - 4 - 15));
  CHECK(d.box.y2 == doctest::Approx(40 - 4 + 15));
  REQUIRE(d.keypoints.size() == 6);
  for (int k = 0; k < 6; ++k) {
    CHECK(d.keypoints[k].x == doctest::Approx(56 + k));
    CHECK(d.keypoints[k].y == doctest::Approx(40 - k));
  }

  CHECK(decode_blazeface(scores.data(), 384, regressors.data(), 16, second_head, 0.95f).detections.empty());
  CHECK(decode_blazeface(scores.data(), 384, regressors.data(), 16, second_head, 0.0f).detections.size() == 384);
}

TEST_CASE("decode_blazeface rejects heads that do not fit the anchors") {
  const std::vector<Anchor> anchors = blazeface_anchors(128);
  std::vector<float> scores(512, 0.0f);
  std::vector<float> regressors(512 * 16, 0.0f);
  const std::span<const Anchor> first_head(anchors.data(), 512);
  CHECK(decode_blazeface(scores.data(), 512, regressors.data(), 16, first_head, 0.5f).ok());
  const DecodeResult wrong_count = decode_blazeface(scores.data(), 384, regressors.data(), 16, first_head, 0.5f);
  CHECK_FALSE(wrong_count.ok());
  CHECK(wrong_count.error.find("384 scores for 512 anchors") != std::string::npos);
  CHECK_FALSE(decode_blazeface(scores.data(), 512, regressors.data(), 4, first_head, 0.5f).ok());
}

TEST_CASE("decode_blazeface_rows: merged rows decode as the two heads do") {
  const std::vector<Anchor> anchors = blazeface_anchors(256);
  std::vector<float> scores(896), regressors(896 * 16), rows(896 * 17);
  for (int a = 0; a < 896; ++a) {
    scores[a] = static_cast<float>((a * 37) % 101 - 50) / 10.0f;  // logits -5 .. 5
    for (int k = 0; k < 16; ++k) regressors[a * 16 + k] = static_cast<float>((a * 13 + k * 7) % 61 - 20);
    rows[a * 17] = scores[a];
    std::copy_n(regressors.data() + a * 16, 16, rows.data() + a * 17 + 1);
  }
  std::vector<Detection> heads;
  for (const auto& [first, count] : {std::pair{0, 512}, std::pair{512, 384}}) {
    const DecodeResult head = decode_blazeface(scores.data() + first, count, regressors.data() + first * 16, 16,
                                               std::span<const Anchor>(anchors).subspan(first, count), 0.6f);
    REQUIRE(head.ok());
    heads.insert(heads.end(), head.detections.begin(), head.detections.end());
  }
  const DecodeResult merged = decode_blazeface_rows(rows.data(), 896, 17, anchors, 0.6f);
  REQUIRE(merged.ok());
  REQUIRE(merged.detections.size() == heads.size());
  CHECK(heads.size() > 100);
  CHECK(heads.size() < 800);
  for (size_t k = 0; k < heads.size(); ++k) {
    CHECK(merged.detections[k].score == heads[k].score);
    CHECK(merged.detections[k].box.x1 == heads[k].box.x1);
    CHECK(merged.detections[k].box.y2 == heads[k].box.y2);
    CHECK(merged.detections[k].keypoints[3].y == heads[k].keypoints[3].y);
  }

  const DecodeResult wrong_rows = decode_blazeface_rows(rows.data(), 512, 17, anchors, 0.6f);
  CHECK(wrong_rows.error.find("512 rows for 896 anchors") != std::string::npos);
  const DecodeResult wrong_channels = decode_blazeface_rows(rows.data(), 896, 16, anchors, 0.6f);
  CHECK(wrong_channels.error.find("16 channels, expected 17") != std::string::npos);
}
