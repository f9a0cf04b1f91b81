// What a stream does not report: masks (areas whose detections are dropped, by where each object
// stands) and object filters (bounds on a class's score, box area and shape). They run on each
// processed frame's detections before tracking, zones and events, so a masked tree or an
// implausible box never starts a track, enters a zone or raises an event.
//
// Areas are fractions of the frame's area and the shape is the box's width over its height in
// pixels, so one configuration holds at any resolution. A detection must pass every filter whose
// classes include its own and stand in no mask whose classes do.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/detect/detection.h"
#include "pipeline/zones/zone_geometry.h"

namespace edgefuse {

struct ObjectFilterRule {
  std::vector<int> class_ids;  // the classes it applies to; empty: every class
  float min_score = 0;
  double min_area = 0, max_area = 1;    // box area over frame area
  double min_ratio = 0, max_ratio = 0;  // box width over height; max_ratio 0: no limit
};

struct ObjectMask {
  std::string name;
  std::vector<Point> polygon;  // >= 3 points, frame fractions
  std::vector<int> class_ids;  // the classes it drops; empty: every class
};

// Why a detection was dropped: the first bound it failed, in this order.
enum class DropReason { kScore, kArea, kRatio, kMask };
inline constexpr size_t kDropReasons = 4;
std::string_view drop_reason_name(DropReason reason);  // "score", "area", "ratio", "mask"

// Detections dropped by one call, per reason (indexed by DropReason).
using DropCounts = std::array<int64_t, kDropReasons>;

class ObjectFilter {
 public:
  ObjectFilter() = default;
  ObjectFilter(std::vector<ObjectFilterRule> rules, std::vector<ObjectMask> masks);

  bool empty() const { return rules_.empty() && masks_.empty(); }
  const std::vector<ObjectMask>& masks() const { return masks_; }

  // Whether `detection`, in a width x height frame, is dropped, and if so why (`reason`).
  bool drops(const Detection& detection, int width, int height, DropReason* reason) const;

  // Removes the dropped detections (the others keep their order) and counts them by reason.
  DropCounts apply(std::vector<Detection>& detections, int width, int height) const;

 private:
  std::vector<ObjectFilterRule> rules_;
  std::vector<ObjectMask> masks_;
};

}  // namespace edgefuse
