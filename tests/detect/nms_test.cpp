#include "models/detect/nms.h"

#include <doctest/doctest.h>

#include <vector>

using namespace edgefuse;

namespace {

Detection make(float x1, float y1, float x2, float y2, float score, int class_id) {
  Detection d;
  d.box = {x1, y1, x2, y2};
  d.score = score;
  d.class_id = class_id;
  return d;
}

}  // namespace

TEST_CASE("iou matches hand computation") {
  const Box a{0, 0, 10, 10};
  CHECK(iou(a, a) == doctest::Approx(1.0));
  CHECK(iou(a, Box{5, 0, 15, 10}) == doctest::Approx(50.0 / 150.0));
  CHECK(iou(a, Box{5, 5, 15, 15}) == doctest::Approx(25.0 / 175.0));
  CHECK(iou(a, Box{2, 2, 4, 4}) == doctest::Approx(4.0 / 100.0));  // contained
  CHECK(iou(a, Box{10, 0, 20, 10}) == 0.0f);                       // touching edges
  CHECK(iou(a, Box{20, 20, 30, 30}) == 0.0f);
  CHECK(iou(Box{1, 1, 1, 1}, Box{1, 1, 1, 1}) == 0.0f);  // empty union
}

TEST_CASE("nms_per_class suppresses overlaps within a class only") {
  std::vector<Detection> detections = {
      make(0, 0, 10, 10, 0.6f, 0),    // IoU with the best below: 90 / 110 = 0.82 > 0.45: suppressed
      make(1, 0, 11, 10, 0.9f, 0),    // best of class 0
      make(1, 0, 11, 10, 0.8f, 1),    // same box, other class: kept
      make(50, 50, 60, 60, 0.7f, 0),  // far away: kept
      make(0, 5, 10, 15, 0.5f, 0),    // IoU with the best: 45 / 155 = 0.29 <= 0.45: kept
  };
  const std::vector<Detection> kept = nms_per_class(detections, 0.45f, 0);
  REQUIRE(kept.size() == 4);
  CHECK(kept[0].score == doctest::Approx(0.9));
  CHECK(kept[1].score == doctest::Approx(0.8));
  CHECK(kept[1].class_id == 1);
  CHECK(kept[2].score == doctest::Approx(0.7));
  CHECK(kept[3].score == doctest::Approx(0.5));

  // A tighter threshold also removes the 0.29 overlap.
  CHECK(nms_per_class(detections, 0.25f, 0).size() == 3);
  // max_detections keeps the best ones.
  const std::vector<Detection> top2 = nms_per_class(detections, 0.45f, 2);
  REQUIRE(top2.size() == 2);
  CHECK(top2[0].score == doctest::Approx(0.9));
  CHECK(top2[1].score == doctest::Approx(0.8));
}

TEST_CASE("nms_class_agnostic suppresses across classes; ties keep input order") {
  std::vector<Detection> detections = {
      make(1, 0, 11, 10, 0.8f, 1),
      make(1, 0, 11, 10, 0.8f, 0),  // same score as the first: the first wins
      make(0, 0, 10, 10, 0.6f, 2),
      make(50, 50, 60, 60, 0.7f, 0),
  };
  const std::vector<Detection> kept = nms_class_agnostic(detections, 0.45f, 0);
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].class_id == 1);
  CHECK(kept[1].score == doctest::Approx(0.7));
  CHECK(nms_class_agnostic({}, 0.45f, 10).empty());
}
