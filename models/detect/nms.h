// Greedy non-maximum suppression and box overlap.
#pragma once

#include <vector>

#include "models/detect/detection.h"

namespace edgefuse {

// Intersection over union; 0 when the union is empty.
float iou(const Box& a, const Box& b);

// Greedy NMS within each class: visits detections by descending score (ties keep their input
// order), keeps one unless it overlaps an already kept detection of the same class by IoU >
// iou_threshold. Returns at most max_detections (all when <= 0), by descending score.
std::vector<Detection> nms_per_class(std::vector<Detection> detections, float iou_threshold, int max_detections);

// The same, across all classes. Used for faces: MediaPipe blends the overlapping BlazeFace boxes
// (weighted NMS); plain suppression keeps the best anchor's box unchanged, which is simpler, is
// the reference the tests compare with, and differs from blending by a few pixels at most.
std::vector<Detection> nms_class_agnostic(std::vector<Detection> detections, float iou_threshold, int max_detections);

}  // namespace edgefuse
