// The event the daemon emits for a processed frame, and its JSON-lines form (docs/EVENTS.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/detect/detection.h"
#include "pipeline/tracking/track_journal.h"
#include "pipeline/zones/zone_monitor.h"

namespace edgefuse {

struct DetectionEvent {
  std::string id;  // unique across daemon runs ("<run id>-<sequence>"): receivers detect duplicates with it
  std::string stream;
  std::string model;
  int64_t frame = 0;          // the stream's decoded-frame number
  int64_t pts_ns = -1;        // stream timestamp, -1 when none
  int64_t wall_time_ns = 0;   // Unix time the event was made
  double latency_ms = 0;      // glass to event: from the frame's capture/presentation time to now
  int width = 0, height = 0;  // source frame size; boxes are in its pixels
  std::vector<Detection> detections;
  // The stream's zones and lines (names for zone_mask bits and the activity's indices); null: none.
  const ZoneMonitor* zones = nullptr;
  ZoneActivity zone_activity;
  std::string snapshot;  // this frame's snapshot JPEG (written shortly after); empty: none
};

// One line of compact JSON (no trailing newline), "type":"detections". Labels name class ids (label_for's
// fallback otherwise).
std::string event_to_json(const DetectionEvent& event, const std::vector<std::string>& labels);

// A stream's supervision state changed (connecting, streaming, stalled, backoff, ended, failed).
struct StateEvent {
  std::string id;
  std::string stream;
  std::string state, previous;
  std::string reason;     // scrubbed of secrets
  double retry_in_s = 0;  // backoff only: seconds until the next attempt
  int64_t reconnects = 0;
  int64_t wall_time_ns = 0;
};

// One line of compact JSON, "type":"state".
std::string state_event_to_json(const StateEvent& event);

// A tracked object's whole stay in view, when its track ends or its stream stops (TrackJournal).
struct TrackEvent {
  std::string id;
  std::string stream;
  std::string model;
  TrackRecord record;
  std::vector<std::string> zone_names;  // the stream's zones, by zone_mask bit
  int64_t wall_time_ns = 0;
};

// One line of compact JSON, "type":"track".
std::string track_event_to_json(const TrackEvent& event, const std::vector<std::string>& labels);

// "2026-12-02T15:04:05.123Z" for Unix time in nanoseconds.
std::string format_utc_iso8601(int64_t unix_ns);

}  // namespace edgefuse
