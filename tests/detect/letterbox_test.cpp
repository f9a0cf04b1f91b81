#include "models/detect/letterbox.h"

#include <doctest/doctest.h>

#include <vector>

using namespace edgefuse;

TEST_CASE("compute_letterbox fits the longer side, top-left or centred") {
  const Letterbox wide = compute_letterbox(768, 576, 416, 416, /*centre=*/false);
  CHECK(wide.scale == doctest::Approx(416.0 / 768.0));
  CHECK(wide.resized_w == 416);
  CHECK(wide.resized_h == 312);
  CHECK(wide.pad_x == 0);
  CHECK(wide.pad_y == 0);

  const Letterbox tall = compute_letterbox(300, 600, 128, 128, /*centre=*/true);
  CHECK(tall.resized_w == 64);
  CHECK(tall.resized_h == 128);
  CHECK(tall.pad_x == 32);
  CHECK(tall.pad_y == 0);

  const Letterbox odd = compute_letterbox(100, 99, 128, 128, /*centre=*/true);
  CHECK(odd.resized_w == 128);
  CHECK(odd.resized_h == 127);  // 99 * 1.28 = 126.72
  CHECK(odd.pad_y == 0);        // the odd pixel goes below
}

TEST_CASE("unletterbox maps input boxes and keypoints back to source pixels and clips") {
  const Letterbox lb = compute_letterbox(640, 480, 128, 128, /*centre=*/true);  // 128x96 at y 16
  REQUIRE(lb.pad_y == 16);
  Detection inside;
  inside.box = {32, 16 + 24, 64, 16 + 48};
  inside.keypoints = {{64, 64}};
  Detection overhanging;
  overhanging.box = {-10, 0, 20, 30};  // above the image and left of it
  Detection in_padding;
  in_padding.box = {10, 115, 20, 127};  // entirely below the image (y >= 112)
  std::vector<Detection> detections = {inside, overhanging, in_padding};

  unletterbox(detections, lb, 640, 480);
  REQUIRE(detections.size() == 2);
  CHECK(detections[0].box.x1 == doctest::Approx(160));
  CHECK(detections[0].box.y1 == doctest::Approx(120));
  CHECK(detections[0].box.x2 == doctest::Approx(320));
  CHECK(detections[0].box.y2 == doctest::Approx(240));
  CHECK(detections[0].keypoints[0].x == doctest::Approx(320));
  CHECK(detections[0].keypoints[0].y == doctest::Approx(240));
  CHECK(detections[1].box.x1 == 0.0f);
  CHECK(detections[1].box.y1 == 0.0f);
  CHECK(detections[1].box.x2 == doctest::Approx(100));
  CHECK(detections[1].box.y2 == doctest::Approx(70));
}

TEST_CASE("letterbox round trip: source box -> input -> source") {
  const Letterbox lb = compute_letterbox(1280, 720, 416, 416, /*centre=*/false);
  const Box source{100, 200, 900, 700};
  const float sx = static_cast<float>(lb.resized_w) / 1280.0f;
  const float sy = static_cast<float>(lb.resized_h) / 720.0f;
  Detection d;
  d.box = {source.x1 * sx + static_cast<float>(lb.pad_x), source.y1 * sy + static_cast<float>(lb.pad_y),
           source.x2 * sx + static_cast<float>(lb.pad_x), source.y2 * sy + static_cast<float>(lb.pad_y)};
  std::vector<Detection> detections = {d};
  unletterbox(detections, lb, 1280, 720);
  REQUIRE(detections.size() == 1);
  CHECK(detections[0].box.x1 == doctest::Approx(source.x1).epsilon(1e-5));
  CHECK(detections[0].box.y1 == doctest::Approx(source.y1).epsilon(1e-5));
  CHECK(detections[0].box.x2 == doctest::Approx(source.x2).epsilon(1e-5));
  CHECK(detections[0].box.y2 == doctest::Approx(source.y2).epsilon(1e-5));
}
