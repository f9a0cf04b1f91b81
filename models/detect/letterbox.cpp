#include "models/detect/letterbox.h"

#include <algorithm>
#include <cmath>

namespace edgefuse {

Letterbox compute_letterbox(int src_w, int src_h, int dst_w, int dst_h, bool centre) {
  Letterbox letterbox;
  if (src_w <= 0 || src_h <= 0 || dst_w <= 0 || dst_h <= 0) return letterbox;
  const double scale = std::min(static_cast<double>(dst_w) / src_w, static_cast<double>(dst_h) / src_h);
  letterbox.scale = static_cast<float>(scale);
  letterbox.resized_w = std::clamp(static_cast<int>(std::lround(src_w * scale)), 1, dst_w);
  letterbox.resized_h = std::clamp(static_cast<int>(std::lround(src_h * scale)), 1, dst_h);
  if (centre) {
    letterbox.pad_x = (dst_w - letterbox.resized_w) / 2;
    letterbox.pad_y = (dst_h - letterbox.resized_h) / 2;
  }
  return letterbox;
}

void unletterbox(std::vector<Detection>& detections, const Letterbox& letterbox, int src_w, int src_h) {
  if (src_w <= 0 || src_h <= 0 || letterbox.resized_w <= 0 || letterbox.resized_h <= 0) {
    detections.clear();
    return;
  }
  const float scale_x = static_cast<float>(letterbox.resized_w) / static_cast<float>(src_w);
  const float scale_y = static_cast<float>(letterbox.resized_h) / static_cast<float>(src_h);
  const auto max_x = static_cast<float>(src_w);
  const auto max_y = static_cast<float>(src_h);
  auto to_source_x = [&](float x) {
    return std::clamp((x - static_cast<float>(letterbox.pad_x)) / scale_x, 0.0f, max_x);
  };
  auto to_source_y = [&](float y) {
    return std::clamp((y - static_cast<float>(letterbox.pad_y)) / scale_y, 0.0f, max_y);
  };
  for (Detection& detection : detections) {
    detection.box = {to_source_x(detection.box.x1), to_source_y(detection.box.y1), to_source_x(detection.box.x2),
                     to_source_y(detection.box.y2)};
    for (Keypoint& keypoint : detection.keypoints) keypoint = {to_source_x(keypoint.x), to_source_y(keypoint.y)};
  }
  std::erase_if(detections, [](const Detection& detection) { return detection.box.area() <= 0; });
}

}  // namespace edgefuse
