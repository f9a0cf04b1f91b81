#include "pipeline/json/detection_json.h"

#include "models/detect/labels.h"

namespace edgefuse {

void write_detections(JsonWriter& json, const std::vector<Detection>& detections,
                      const std::vector<std::string>& labels, std::span<const std::string> zone_names) {
  json.begin_array();
  for (const Detection& detection : detections) {
    json.begin_object();
    json.key("label").value(label_for(labels, detection.class_id));
    json.key("class_id").value(detection.class_id);
    if (detection.track_id >= 0) json.key("track_id").value(detection.track_id);
    json.key("score").value(detection.score, 4);
    json.key("box");
    write_box(json, detection.box);
    if (!detection.keypoints.empty()) {
      json.key("keypoints").begin_array();
      for (const Keypoint& point : detection.keypoints)
        json.begin_array().value(point.x, 2).value(point.y, 2).end_array();
      json.end_array();
    }
    if (detection.zone_mask != 0) {
      json.key("zones");
      write_zone_names(json, detection.zone_mask, zone_names);
    }
    json.end_object();
  }
  json.end_array();
}

void write_box(JsonWriter& json, const Box& box) {
  json.begin_array();
  for (const float coordinate : {box.x1, box.y1, box.x2, box.y2}) json.value(coordinate, 2);
  json.end_array();
}

void write_zone_names(JsonWriter& json, uint32_t zone_mask, std::span<const std::string> zone_names) {
  json.begin_array();
  for (size_t z = 0; z < zone_names.size(); ++z) {
    if ((zone_mask >> z & 1u) != 0) json.value(zone_names[z]);
  }
  json.end_array();
}

}  // namespace edgefuse
