#include "pipeline/zones/object_filter.h"

#include <algorithm>
#include <cmath>

#include "pipeline/zones/class_list.h"

namespace edgefuse {

std::string_view drop_reason_name(DropReason reason) {
  switch (reason) {
    case DropReason::kScore:
      return "score";
    case DropReason::kArea:
      return "area";
    case DropReason::kRatio:
      return "ratio";
    case DropReason::kMask:
      return "mask";
  }
  return "unknown";
}

ObjectFilter::ObjectFilter(std::vector<ObjectFilterRule> rules, std::vector<ObjectMask> masks)
    : rules_(std::move(rules)), masks_(std::move(masks)) {}

bool ObjectFilter::drops(const Detection& detection, int width, int height, DropReason* reason) const {
  const double frame_area = static_cast<double>(width) * height;
  const double area = frame_area > 0 ? detection.box.area() / frame_area : 0;
  // A box of no height is as wide as shapes get.
  const double box_height = detection.box.height();
  const double ratio = box_height > 0 ? std::max(0.0f, detection.box.width()) / box_height : HUGE_VAL;
  for (const ObjectFilterRule& rule : rules_) {
    if (!class_listed(rule.class_ids, detection.class_id)) continue;
    if (detection.score < rule.min_score) {
      *reason = DropReason::kScore;
      return true;
    }
    if (area < rule.min_area || area > rule.max_area) {
      *reason = DropReason::kArea;
      return true;
    }
    if (ratio < rule.min_ratio || (rule.max_ratio > 0 && ratio > rule.max_ratio)) {
      *reason = DropReason::kRatio;
      return true;
    }
  }
  if (masks_.empty()) return false;
  const Point anchor = anchor_point(detection.box, width, height);
  for (const ObjectMask& mask : masks_) {
    if (class_listed(mask.class_ids, detection.class_id) && polygon_contains(mask.polygon, anchor)) {
      *reason = DropReason::kMask;
      return true;
    }
  }
  return false;
}

DropCounts ObjectFilter::apply(std::vector<Detection>& detections, int width, int height) const {
  DropCounts counts{};
  if (empty()) return counts;
  std::erase_if(detections, [&](const Detection& detection) {
    DropReason reason = DropReason::kScore;
    if (!drops(detection, width, height, &reason)) return false;
    ++counts[static_cast<size_t>(reason)];
    return true;
  });
  return counts;
}

}  // namespace edgefuse
