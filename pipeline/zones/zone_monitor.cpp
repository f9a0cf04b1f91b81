#include "pipeline/zones/zone_monitor.h"

#include <algorithm>
#include <utility>

#include "pipeline/zones/class_list.h"
#include "runtime/status.h"

namespace edgefuse {
namespace {

// Adds `count` to the class's entry of `counts` (kept sorted by class id), making one if needed.
void add_to_class_count(std::vector<ClassCount>& counts, int class_id, int count) {
  auto at = std::lower_bound(counts.begin(), counts.end(), class_id,
                             [](const ClassCount& entry, int id) { return entry.class_id < id; });
  if (at == counts.end() || at->class_id != class_id) at = counts.insert(at, ClassCount{class_id, 0});
  at->count += count;
}

}  // namespace

const char* zone_event_name(ZoneEvent event) {
  switch (event) {
    case ZoneEvent::kEnter:
      return "enter";
    case ZoneEvent::kLeave:
      return "leave";
    case ZoneEvent::kLoiter:
      return "loiter";
  }
  return "?";
}

const char* crossing_direction_name(CrossingDirection direction) {
  return direction == CrossingDirection::kForward ? "forward" : "backward";
}

ZoneMonitor::ZoneMonitor(std::vector<Zone> zones, std::vector<CountingLine> lines, int max_age)
    : zones_(std::move(zones)), lines_(std::move(lines)), max_age_(max_age) {
  EF_ASSERT(zones_.size() <= kMaxZones && lines_.size() <= kMaxLines, "too many zones or lines");
  for (const Zone& zone : zones_) {
    EF_ASSERT(zone.polygon.size() >= 3, "zone ", zone.name, " has under 3 points");
    totals_.zone_names.push_back(zone.name);
  }
  for (const CountingLine& line : lines_) totals_.line_names.push_back(line.name);
  totals_.occupancy.assign(zones_.size(), 0);
  totals_.class_counts.assign(zones_.size(), {});
  totals_.entries.assign(zones_.size(), 0);
  totals_.loiterings.assign(zones_.size(), 0);
  totals_.crossings.assign(lines_.size(), {0, 0});
}

ZoneMonitor::ZoneMonitor(ZoneMonitor&& other) noexcept {
  *this = std::move(other);
}

ZoneMonitor& ZoneMonitor::operator=(ZoneMonitor&& other) noexcept {
  if (this == &other) return *this;
  const std::scoped_lock lock(totals_mutex_, other.totals_mutex_);
  zones_ = std::move(other.zones_);
  lines_ = std::move(other.lines_);
  max_age_ = other.max_age_;
  frame_ = other.frame_;
  seconds_ = other.seconds_;
  tracks_ = std::move(other.tracks_);
  totals_ = std::move(other.totals_);
  return *this;
}

ZoneActivity ZoneMonitor::update(std::span<Detection> detections, int width, int height, double seconds) {
  ZoneActivity activity;
  activity.occupancy.assign(zones_.size(), 0);
  activity.class_counts.assign(zones_.size(), {});
  ++frame_;
  seconds_ = std::max(seconds_, seconds);
  for (Detection& detection : detections) {
    detection.zone_mask = 0;
    if (width <= 0 || height <= 0) continue;
    const Point anchor = anchor_point(detection.box, width, height);
    for (size_t z = 0; z < zones_.size(); ++z) {
      if (!class_listed(zones_[z].class_ids, detection.class_id) || !polygon_contains(zones_[z].polygon, anchor))
        continue;
      detection.zone_mask |= 1u << z;
      ++activity.occupancy[z];
      add_to_class_count(activity.class_counts[z], detection.class_id, 1);
    }
    if (detection.track_id >= 0) follow_track(detection, anchor, activity);
  }
  expire_tracks(activity);

  const std::lock_guard lock(totals_mutex_);
  totals_.occupancy = activity.occupancy;
  for (size_t z = 0; z < zones_.size(); ++z) {
    for (ClassCount& seen : totals_.class_counts[z]) seen.count = 0;
    for (const ClassCount& now : activity.class_counts[z])
      add_to_class_count(totals_.class_counts[z], now.class_id, now.count);
  }
  for (const ZoneTransition& t : activity.transitions) {
    totals_.entries[t.zone] += t.event == ZoneEvent::kEnter ? 1 : 0;
    totals_.loiterings[t.zone] += t.event == ZoneEvent::kLoiter ? 1 : 0;
  }
  for (const LineCrossing& c : activity.crossings) ++totals_.crossings[c.line][static_cast<size_t>(c.direction)];
  return activity;
}

void ZoneMonitor::follow_track(const Detection& detection, Point anchor, ZoneActivity& activity) {
  TrackState& track = tracks_[detection.track_id];
  track.last_seen = frame_;
  track.last_seen_s = seconds_;
  track.class_id = detection.class_id;
  const auto report = [&](size_t zone, ZoneEvent event, double dwell_s) {
    activity.transitions.push_back({.zone = zone,
                                    .event = event,
                                    .track_id = detection.track_id,
                                    .class_id = detection.class_id,
                                    .dwell_s = dwell_s});
  };
  // Leaving before entering, as a walker from one zone into the next does.
  const uint32_t left = track.inside & ~detection.zone_mask, entered = detection.zone_mask & ~track.inside;
  for (size_t z = 0; z < zones_.size(); ++z) {
    if ((left >> z & 1u) != 0) report(z, ZoneEvent::kLeave, seconds_ - track.entered_s[z]);
  }
  for (size_t z = 0; z < zones_.size(); ++z) {
    if ((entered >> z & 1u) == 0) continue;
    report(z, ZoneEvent::kEnter, 0);
    track.entered_s[z] = seconds_;
  }
  track.inside = detection.zone_mask;
  track.loitered &= track.inside;  // a new stay may loiter again
  for (size_t z = 0; z < zones_.size(); ++z) {
    const double dwell_s = seconds_ - track.entered_s[z];
    if ((track.inside >> z & 1u) == 0 || (track.loitered >> z & 1u) != 0 || zones_[z].loiter_s <= 0 ||
        dwell_s < zones_[z].loiter_s) {
      continue;
    }
    report(z, ZoneEvent::kLoiter, dwell_s);
    track.loitered |= 1u << z;
  }

  track.lines.resize(lines_.size());
  for (size_t l = 0; l < lines_.size(); ++l) {
    const CountingLine& line = lines_[l];
    if (!class_listed(line.class_ids, detection.class_id)) continue;
    const int side = side_of_line(line.from, line.to, anchor);
    if (side == 0) continue;  // on the line: wait to see which way it goes
    LineSide& last = track.lines[l];
    if (last.side != 0 && last.side != side && move_crosses_segment(last.where, anchor, line.from, line.to)) {
      activity.crossings.push_back({.line = l,
                                    .direction = side > 0 ? CrossingDirection::kForward : CrossingDirection::kBackward,
                                    .track_id = detection.track_id,
                                    .class_id = detection.class_id});
    }
    last = {side, anchor};
  }
}

void ZoneMonitor::expire_tracks(ZoneActivity& activity) {
  std::vector<int64_t> expired;
  for (const auto& [id, track] : tracks_) {
    if (frame_ - track.last_seen > max_age_) expired.push_back(id);
  }
  std::sort(expired.begin(), expired.end());  // the map's order is arbitrary; events are not
  for (const int64_t id : expired) {
    const TrackState& track = tracks_.at(id);
    for (size_t z = 0; z < zones_.size(); ++z) {
      if ((track.inside >> z & 1u) == 0) continue;
      // It was last seen inside: that is where its stay ends.
      activity.transitions.push_back({.zone = z,
                                      .event = ZoneEvent::kLeave,
                                      .track_id = id,
                                      .class_id = track.class_id,
                                      .dwell_s = track.last_seen_s - track.entered_s[z]});
    }
    tracks_.erase(id);
  }
}

ZoneTotals ZoneMonitor::totals() const {
  const std::lock_guard lock(totals_mutex_);
  return totals_;
}

}  // namespace edgefuse
