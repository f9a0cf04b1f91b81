#include "pipeline/zones/object_filter.h"

#include <doctest/doctest.h>

#include <vector>

using namespace edgefuse;

namespace {

constexpr int kWidth = 1000, kHeight = 500;  // 500000 px

// A box `w` x `h` px with its bottom centre at (fx, fy) in frame fractions.
Detection box_at(double fx, double fy, float w, float h, int class_id = 0, float score = 0.9f) {
  Detection d;
  const auto x = static_cast<float>(fx * kWidth), y = static_cast<float>(fy * kHeight);
  d.box = {x - w / 2, y - h, x + w / 2, y};
  d.score = score;
  d.class_id = class_id;
  return d;
}

// Why the filter drops `d`, or "kept".
std::string verdict(const ObjectFilter& filter, const Detection& d, int width = kWidth, int height = kHeight) {
  DropReason reason = DropReason::kScore;
  return filter.drops(d, width, height, &reason) ? std::string(drop_reason_name(reason)) : "kept";
}

}  // namespace

TEST_CASE("a filter bounds score, area (of the frame) and width over height, for its classes only") {
  // Class 0 (people): score >= 0.5, 0.1 % to 10 % of the frame, 0.2 to 1 as wide as tall.
  const ObjectFilter filter(
      {{.class_ids = {0}, .min_score = 0.5f, .min_area = 0.001, .max_area = 0.1, .min_ratio = 0.2, .max_ratio = 1}},
      {});
  CHECK(verdict(filter, box_at(0.5, 0.5, 40, 100)) == "kept");             // 0.8 %, 0.4
  CHECK(verdict(filter, box_at(0.5, 0.5, 40, 100, 0, 0.49f)) == "score");  // faint
  CHECK(verdict(filter, box_at(0.5, 0.5, 10, 40)) == "area");              // 0.08 %
  CHECK(verdict(filter, box_at(0.5, 0.9, 200, 300)) == "area");            // 12 %
  CHECK(verdict(filter, box_at(0.5, 0.5, 150, 100)) == "ratio");           // 1.5 wide
  CHECK(verdict(filter, box_at(0.5, 0.5, 15, 100)) == "ratio");            // 0.15: a pole
  CHECK(verdict(filter, box_at(0.5, 0.5, 100, 0)) == "area");              // no height, no area
  // Bounds are inclusive: exactly 0.1 % of the frame and exactly as wide as tall pass.
  CHECK(verdict(filter, box_at(0.5, 0.5, 20, 25)) == "kept");
  CHECK(verdict(filter, box_at(0.5, 0.5, 50, 50)) == "kept");
  // Another class passes whatever it looks like.
  CHECK(verdict(filter, box_at(0.5, 0.5, 150, 100, 2, 0.31f)) == "kept");
  // The first bound failed is the reason: score before area before shape.
  CHECK(verdict(filter, box_at(0.5, 0.5, 10, 5, 0, 0.1f)) == "score");
  CHECK(verdict(filter, box_at(0.5, 0.5, 10, 5)) == "area");
  // Fractions of the frame: the same box is 4x the area fraction of a frame half as wide and high.
  CHECK(verdict(filter, box_at(0.5, 0.5, 120, 200), kWidth, kHeight) == "kept");           // 4.8 %
  CHECK(verdict(filter, box_at(0.25, 0.5, 120, 200), kWidth / 2, kHeight / 2) == "area");  // 19.2 %
}

TEST_CASE("every filter of a detection's class applies; a filter without classes applies to all") {
  const ObjectFilter filter({{.class_ids = {}, .min_area = 0.001},                       // all: not tiny
                             {.class_ids = {2, 7}, .min_score = 0.6f, .max_ratio = 0}},  // vehicles: confident
                            {});
  CHECK(verdict(filter, box_at(0.5, 0.5, 10, 10, 0)) == "area");
  CHECK(verdict(filter, box_at(0.5, 0.5, 10, 10, 2)) == "area");
  CHECK(verdict(filter, box_at(0.5, 0.5, 100, 50, 7, 0.55f)) == "score");
  CHECK(verdict(filter, box_at(0.5, 0.5, 100, 50, 0, 0.55f)) == "kept");
  CHECK(verdict(filter, box_at(0.5, 0.5, 400, 20, 2, 0.7f)) == "kept");  // max_ratio 0: no ceiling
}

TEST_CASE("a mask drops the detections of its classes standing inside it, wherever the box reaches") {
  // The left quarter, for class 0 only; and a triangle at the bottom right for every class.
  const ObjectFilter filter(
      {}, {{"hedge", {{0, 0}, {0.25, 0}, {0.25, 1}, {0, 1}}, {0}}, {"screen", {{1, 0.6}, {1, 1}, {0.6, 1}}, {}}});
  CHECK(verdict(filter, box_at(0.1, 0.5, 40, 100)) == "mask");
  CHECK(verdict(filter, box_at(0.1, 0.5, 40, 100, 3)) == "kept");  // another class
  // Standing just right of the hedge with the box reaching far into it: not in the mask.
  CHECK(verdict(filter, box_at(0.27, 0.5, 200, 100)) == "kept");
  CHECK(verdict(filter, box_at(0.95, 0.95, 40, 100, 3)) == "mask");
  CHECK(verdict(filter, box_at(0.7, 0.7, 40, 100, 3)) == "kept");  // beside the triangle's slope
  // Filters run first: a faint detection in a mask counts as dropped by score.
  const ObjectFilter both({{.min_score = 0.5f}}, {{"all", {{0, 0}, {1, 0}, {1, 1}, {0, 1}}, {}}});
  CHECK(verdict(both, box_at(0.5, 0.5, 40, 100, 0, 0.4f)) == "score");
  CHECK(verdict(both, box_at(0.5, 0.5, 40, 100)) == "mask");
  CHECK(both.masks().size() == 1);
  CHECK(both.masks()[0].name == "all");
}

TEST_CASE("apply removes the dropped detections, keeps the others in order and counts by reason") {
  const ObjectFilter filter({{.class_ids = {0}, .min_score = 0.5f, .max_area = 0.05}},
                            {{"corner", {{0, 0}, {0.2, 0}, {0.2, 0.2}, {0, 0.2}}, {}}});
  std::vector<Detection> detections = {
      box_at(0.5, 0.5, 40, 100, 0, 0.9f),   // kept
      box_at(0.1, 0.1, 20, 40, 1, 0.8f),    // mask
      box_at(0.5, 0.9, 300, 200, 0, 0.8f),  // area (12 %)
      box_at(0.6, 0.5, 40, 100, 1, 0.4f),   // kept: class 1 has no score bound
      box_at(0.7, 0.5, 40, 100, 0, 0.3f),   // score
      box_at(0.8, 0.5, 30, 90, 0, 0.7f),    // kept
  };
  const std::vector<Detection> all = detections;
  const DropCounts counts = filter.apply(detections, kWidth, kHeight);
  CHECK(counts[static_cast<size_t>(DropReason::kScore)] == 1);
  CHECK(counts[static_cast<size_t>(DropReason::kArea)] == 1);
  CHECK(counts[static_cast<size_t>(DropReason::kRatio)] == 0);
  CHECK(counts[static_cast<size_t>(DropReason::kMask)] == 1);
  REQUIRE(detections.size() == 3);
  CHECK(detections[0].box.x1 == all[0].box.x1);
  CHECK(detections[1].box.x1 == all[3].box.x1);
  CHECK(detections[2].box.x1 == all[5].box.x1);
  // An empty filter keeps everything and counts nothing.
  const ObjectFilter none;
  CHECK(none.empty());
  std::vector<Detection> untouched = all;
  CHECK(none.apply(untouched, kWidth, kHeight) == DropCounts{});
  CHECK(untouched.size() == all.size());
}
