// A detected object, in the pixel coordinates of whatever image the boxes refer to.
#pragma once

#include <cstdint>
#include <vector>

namespace edgefuse {

struct Box {
  float x1 = 0, y1 = 0, x2 = 0, y2 = 0;  // corners; x2 >= x1, y2 >= y1

  float width() const { return x2 - x1; }
  float height() const { return y2 - y1; }
  float area() const { return width() > 0 && height() > 0 ? width() * height() : 0.0f; }
};

// The box of centre (cx, cy) and size w x h, as detector heads predict them.
inline Box centred_box(float cx, float cy, float w, float h) {
  const float half_w = 0.5f * w, half_h = 0.5f * h;
  return {cx - half_w, cy - half_h, cx + half_w, cy + half_h};
}

struct Keypoint {
  float x = 0, y = 0;
};

struct Detection {
  Box box;
  float score = 0;  // in [0, 1]
  int class_id = 0;
  std::vector<Keypoint> keypoints;  // BlazeFace: 6 face landmarks; empty for other families
  int64_t track_id = -1;            // the stream's track of this object (pipeline/tracking); -1: none
  uint32_t zone_mask = 0;           // bit i: it stands in its stream's zone i (pipeline/zones)
};

}  // namespace edgefuse
