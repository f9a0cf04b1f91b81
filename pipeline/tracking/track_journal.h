// One record per tracked object over its whole time in view, for consumers that want an object's
// story (when it came, how long it stayed, where it went, its best view) instead of every frame.
//
// Fed each processed frame after tracking (and zones), it keeps a record per confirmed track
// (track_id >= 0) and hands it back when the track ends: unseen for more than max_age processed
// frames, the tracker's own rule, so the record closes on the frame the tracker gives the track
// up. close() hands back the tracks still in view (a stream stopping or reloading).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/detect/detection.h"

namespace edgefuse {

struct TrackRecord {
  int64_t track_id = 0;
  int class_id = 0;
  int64_t first_frame = 0, last_frame = 0;      // decoded-frame numbers it was seen on, first and last
  int64_t first_pts_ns = -1, last_pts_ns = -1;  // their timestamps (-1: none)
  double first_s = 0, last_s = 0;               // their stream times (StreamClock)
  int64_t sightings = 0;                        // processed frames it was seen on
  Box first_box, last_box, best_box;            // best: where its score was highest
  float best_score = 0;
  int64_t best_frame = 0;
  uint32_t zone_mask = 0;  // every zone it stood in (Detection::zone_mask bits)
  int64_t crossings = 0;   // counting lines it crossed
  std::string snapshot;    // the first snapshot it is in; empty: none
  bool stopped = false;    // closed by close(): the stream stopped while the tracker still followed it
};

class TrackJournal {
 public:
  explicit TrackJournal(int max_age = 15) : max_age_(max_age) {}

  struct Frame {
    int64_t number = 0;
    int64_t pts_ns = -1;
    double seconds = 0;
  };

  // The next processed frame (frames in order): records its tracked detections; crossed lists a
  // track id once per line it crossed on this frame. Returns the records of tracks that ended,
  // by id.
  std::vector<TrackRecord> update(const Frame& frame, std::span<const Detection> detections,
                                  std::span<const int64_t> crossed = {});

  // The snapshot taken of the last frame updated: the first for each of its tracks that has none.
  void note_snapshot(std::span<const Detection> detections, const std::string& path);

  // Every open record, stopped set, by id; the journal is empty after.
  std::vector<TrackRecord> close();

  size_t open_tracks() const { return open_.size(); }

 private:
  struct Open {
    TrackRecord record;
    int64_t last_update = 0;  // processed-frame count when last seen
  };

  int max_age_;
  int64_t updates_ = 0;
  std::unordered_map<int64_t, Open> open_;
};

}  // namespace edgefuse
