#include "models/detect/nms.h"

#include <algorithm>

namespace edgefuse {
namespace {

std::vector<Detection> greedy_nms(std::vector<Detection> detections, float iou_threshold, int max_detections,
                                  bool per_class) {
  std::stable_sort(detections.begin(), detections.end(),
                   [](const Detection& a, const Detection& b) { return a.score > b.score; });
  const size_t limit = max_detections > 0 ? static_cast<size_t>(max_detections) : detections.size();
  std::vector<Detection> kept;
  for (Detection& candidate : detections) {
    if (kept.size() >= limit) break;
    const bool suppressed = std::any_of(kept.begin(), kept.end(), [&](const Detection& k) {
      return (!per_class || k.class_id == candidate.class_id) && iou(k.box, candidate.box) > iou_threshold;
    });
    if (!suppressed) kept.push_back(std::move(candidate));
  }
  return kept;
}

}  // namespace

float iou(const Box& a, const Box& b) {
  const Box overlap{std::max(a.x1, b.x1), std::max(a.y1, b.y1), std::min(a.x2, b.x2), std::min(a.y2, b.y2)};
  const float intersection = overlap.area();
  const float union_area = a.area() + b.area() - intersection;
  return union_area > 0 ? intersection / union_area : 0.0f;
}

std::vector<Detection> nms_per_class(std::vector<Detection> detections, float iou_threshold, int max_detections) {
  return greedy_nms(std::move(detections), iou_threshold, max_detections, /*per_class=*/true);
}

std::vector<Detection> nms_class_agnostic(std::vector<Detection> detections, float iou_threshold, int max_detections) {
  return greedy_nms(std::move(detections), iou_threshold, max_detections, /*per_class=*/false);
}

}  // namespace edgefuse
