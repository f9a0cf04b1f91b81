#include "pipeline/tracking/track_journal.h"

#include <algorithm>

namespace edgefuse {
namespace {

std::vector<TrackRecord> by_id(std::vector<TrackRecord> records) {
  // The map's order is arbitrary; events are not.
  std::sort(records.begin(), records.end(),
            [](const TrackRecord& a, const TrackRecord& b) { return a.track_id < b.track_id; });
  return records;
}

}  // namespace

std::vector<TrackRecord> TrackJournal::update(const Frame& frame, std::span<const Detection> detections,
                                              std::span<const int64_t> crossed) {
  ++updates_;
  for (const Detection& detection : detections) {
    if (detection.track_id < 0) continue;
    auto [it, fresh] = open_.try_emplace(detection.track_id);
    TrackRecord& record = it->second.record;
    if (fresh) {
      record.track_id = detection.track_id;
      record.first_frame = frame.number;
      record.first_pts_ns = frame.pts_ns;
      record.first_s = frame.seconds;
      record.first_box = detection.box;
    }
    it->second.last_update = updates_;
    record.class_id = detection.class_id;
    record.last_frame = frame.number;
    record.last_pts_ns = frame.pts_ns;
    record.last_s = frame.seconds;
    record.last_box = detection.box;
    record.zone_mask |= detection.zone_mask;
    ++record.sightings;
    if (fresh || detection.score > record.best_score) {
      record.best_score = detection.score;
      record.best_box = detection.box;
      record.best_frame = frame.number;
    }
  }
  for (const int64_t id : crossed) {
    if (const auto it = open_.find(id); it != open_.end()) ++it->second.record.crossings;
  }
  std::vector<TrackRecord> ended;
  for (auto it = open_.begin(); it != open_.end();) {
    if (updates_ - it->second.last_update > max_age_) {
      ended.push_back(std::move(it->second.record));
      it = open_.erase(it);
    } else {
      ++it;
    }
  }
  return by_id(std::move(ended));
}

void TrackJournal::note_snapshot(std::span<const Detection> detections, const std::string& path) {
  if (path.empty()) return;
  for (const Detection& detection : detections) {
    if (detection.track_id < 0) continue;
    const auto it = open_.find(detection.track_id);
    if (it != open_.end() && it->second.record.snapshot.empty()) it->second.record.snapshot = path;
  }
}

std::vector<TrackRecord> TrackJournal::close() {
  std::vector<TrackRecord> records;
  for (auto& [id, open] : open_) {
    open.record.stopped = true;
    records.push_back(std::move(open.record));
  }
  open_.clear();
  return by_id(std::move(records));
}

}  // namespace edgefuse
