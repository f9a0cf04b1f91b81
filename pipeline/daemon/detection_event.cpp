#include "pipeline/daemon/detection_event.h"

#include <cstdio>
#include <ctime>

#include "models/detect/labels.h"
#include "pipeline/json/detection_json.h"
#include "pipeline/json/json_writer.h"

namespace edgefuse {
namespace {

void write_zone_activity(JsonWriter& json, const ZoneMonitor& zones, const ZoneActivity& activity,
                         const std::vector<std::string>& labels) {
  if (!zones.zones().empty()) {
    json.key("zone_counts").begin_object();
    for (size_t z = 0; z < zones.zones().size(); ++z) {
      json.key(zones.zones()[z].name).value(z < activity.occupancy.size() ? activity.occupancy[z] : 0);
    }
    json.end_object();
    // The same by class name, each zone listing the classes standing in it.
    json.key("zone_class_counts").begin_object();
    for (size_t z = 0; z < zones.zones().size(); ++z) {
      json.key(zones.zones()[z].name).begin_object();
      if (z < activity.class_counts.size()) {
        for (const ClassCount& entry : activity.class_counts[z])
          json.key(label_for(labels, entry.class_id)).value(entry.count);
      }
      json.end_object();
    }
    json.end_object();
  }
  if (!activity.transitions.empty()) {
    json.key("zone_events").begin_array();
    for (const ZoneTransition& t : activity.transitions) {
      json.begin_object();
      json.key("zone").value(zones.zones()[t.zone].name);
      json.key("event").value(zone_event_name(t.event));
      json.key("track_id").value(t.track_id);
      json.key("label").value(label_for(labels, t.class_id));
      if (t.event != ZoneEvent::kEnter) json.key("dwell_s").value(t.dwell_s, 2);
      json.end_object();
    }
    json.end_array();
  }
  if (!activity.crossings.empty()) {
    json.key("line_crossings").begin_array();
    for (const LineCrossing& c : activity.crossings) {
      json.begin_object();
      json.key("line").value(zones.lines()[c.line].name);
      json.key("direction").value(crossing_direction_name(c.direction));
      json.key("track_id").value(c.track_id);
      json.key("label").value(label_for(labels, c.class_id));
      json.end_object();
    }
    json.end_array();
  }
}

// Milliseconds, three decimals; null when the stream gave no timestamp.
void write_pts_ms(JsonWriter& json, const char* key, int64_t pts_ns) {
  if (pts_ns >= 0) {
    json.key(key).value(static_cast<double>(pts_ns) / 1e6, 3);
  } else {
    json.key(key).null();
  }
}

}  // namespace

std::string format_utc_iso8601(int64_t unix_ns) {
  const int64_t seconds = unix_ns >= 0 ? unix_ns / 1'000'000'000 : (unix_ns - 999'999'999) / 1'000'000'000;
  const auto millis = static_cast<int>((unix_ns - seconds * 1'000'000'000) / 1'000'000);
  const auto time = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
  return text;
}

std::string event_to_json(const DetectionEvent& event, const std::vector<std::string>& labels) {
  JsonWriter json;
  json.begin_object();
  json.key("type").value("detections");
  json.key("id").value(event.id);
  json.key("stream").value(event.stream);
  json.key("frame").value(event.frame);
  write_pts_ms(json, "pts_ms", event.pts_ns);
  json.key("wall_time").value(format_utc_iso8601(event.wall_time_ns));
  json.key("latency_ms").value(event.latency_ms, 2);
  json.key("model").value(event.model);
  json.key("width").value(event.width).key("height").value(event.height);
  json.key("detections");
  write_detections(json, event.detections, labels,
                   event.zones ? event.zones->zone_names() : std::vector<std::string>{});
  if (event.zones != nullptr) write_zone_activity(json, *event.zones, event.zone_activity, labels);
  if (!event.snapshot.empty()) json.key("snapshot").value(event.snapshot);
  json.end_object();
  return json.str();
}

std::string track_event_to_json(const TrackEvent& event, const std::vector<std::string>& labels) {
  const TrackRecord& r = event.record;
  JsonWriter json;
  json.begin_object();
  json.key("type").value("track");
  json.key("id").value(event.id);
  json.key("stream").value(event.stream);
  json.key("model").value(event.model);
  json.key("track_id").value(r.track_id);
  json.key("label").value(label_for(labels, r.class_id));
  json.key("class_id").value(r.class_id);
  json.key("end").value(r.stopped ? "stopped" : "lost");
  json.key("first_frame").value(r.first_frame);
  json.key("last_frame").value(r.last_frame);
  write_pts_ms(json, "first_pts_ms", r.first_pts_ns);
  write_pts_ms(json, "last_pts_ms", r.last_pts_ns);
  json.key("duration_s").value(r.last_s - r.first_s, 2);
  json.key("sightings").value(r.sightings);
  json.key("first_box");
  write_box(json, r.first_box);
  json.key("last_box");
  write_box(json, r.last_box);
  json.key("best").begin_object();
  json.key("score").value(r.best_score, 4);
  json.key("frame").value(r.best_frame);
  json.key("box");
  write_box(json, r.best_box);
  json.end_object();
  if (r.zone_mask != 0) {
    json.key("zones");
    write_zone_names(json, r.zone_mask, event.zone_names);
  }
  if (r.crossings > 0) json.key("line_crossings").value(r.crossings);
  if (!r.snapshot.empty()) json.key("snapshot").value(r.snapshot);
  json.key("wall_time").value(format_utc_iso8601(event.wall_time_ns));
  json.end_object();
  return json.str();
}

std::string state_event_to_json(const StateEvent& event) {
  JsonWriter json;
  json.begin_object();
  json.key("type").value("state");
  json.key("id").value(event.id);
  json.key("stream").value(event.stream);
  json.key("state").value(event.state);
  json.key("previous").value(event.previous);
  json.key("reason").value(event.reason);
  if (event.state == "backoff") json.key("retry_in_s").value(event.retry_in_s, 2);
  json.key("reconnects").value(event.reconnects);
  json.key("wall_time").value(format_utc_iso8601(event.wall_time_ns));
  json.end_object();
  return json.str();
}

}  // namespace edgefuse
