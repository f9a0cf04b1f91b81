// Detections as JSON, the one form `edgefuse detect --json` and the daemon's events share:
// [{"label", "class_id", "track_id" (when tracked), "score", "box": [x1, y1, x2, y2], "keypoints" (when
// any), "zones" (the names of the zones it stands in, when any)}].
#pragma once

#include <span>
#include <string>
#include <vector>

#include "models/detect/detection.h"
#include "pipeline/json/json_writer.h"

namespace edgefuse {

// Writes the array as the next value of `json`; labels name class ids (label_for's fallback
// otherwise), zone_names the bits of each detection's zone_mask.
void write_detections(JsonWriter& json, const std::vector<Detection>& detections,
                      const std::vector<std::string>& labels, std::span<const std::string> zone_names = {});

// [x1, y1, x2, y2], two decimals, as the next value.
void write_box(JsonWriter& json, const Box& box);

// The names of zone_mask's bits, in zone order, as the next value (an array).
void write_zone_names(JsonWriter& json, uint32_t zone_mask, std::span<const std::string> zone_names);

}  // namespace edgefuse
