// Letterbox geometry: fit a source image into a model input keeping its aspect ratio, and map
// boxes from the input back to the source image.
#pragma once

#include <vector>

#include "models/detect/detection.h"

namespace edgefuse {

struct Letterbox {
  float scale = 1;           // resized / source, the same for both axes
  int pad_x = 0, pad_y = 0;  // offset of the resized image inside the input
  int resized_w = 0, resized_h = 0;
};

// The largest aspect-preserving fit of src into dst (sizes rounded to the nearest pixel, at least
// 1), placed at the top-left corner, or centred (padding split evenly, the odd pixel right/below).
// Source and destination sizes must be positive.
Letterbox compute_letterbox(int src_w, int src_h, int dst_w, int dst_h, bool centre);

// Maps boxes and keypoints from input pixels to source pixels (per-axis scales resized / src, so
// the mapping matches the resize exactly), clips them to the src_w x src_h image, and drops
// detections left with zero area (those that lay entirely in the padding).
void unletterbox(std::vector<Detection>& detections, const Letterbox& letterbox, int src_w, int src_h);

}  // namespace edgefuse
