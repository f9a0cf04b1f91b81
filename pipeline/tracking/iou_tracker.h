// Multi-object tracking by box overlap (SORT-style, without appearance): gives each detection of a
// stream a track id that stays the same while the object moves from frame to frame.
//
// Each track predicts its box on the next processed frame from a smoothed per-frame velocity of its
// corners. A frame's detections are matched to the predicted boxes of the same class, the pairs of
// highest IoU first, each of at least `min_iou` (greedy: on a camera's sparse scenes it rarely
// differs from an optimal assignment, which costs O(n^3)). Matched tracks take the detection's
// box; an unmatched detection starts a new track; a track unmatched for more than `max_age` frames
// in a row ends. A track confirms once matched on `min_hits` frames (counting its first), and only
// confirmed tracks label their detections, so that a one-frame false positive never takes an id.
// Ids count up from 1 per tracker and are never reused.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "models/detect/detection.h"

namespace edgefuse {

struct IouTrackerOptions {
  float min_iou = 0.3f;  // a detection matches a predicted box only with at least this overlap
  int max_age = 15;      // frames a track survives without a match
  int min_hits = 2;      // matched frames before a track labels its detections
};

class IouTracker {
 public:
  explicit IouTracker(IouTrackerOptions options = {}) : options_(options) {}

  // The next processed frame's detections (boxes in the stream's pixels): sets each one's
  // track_id (-1 while its track is unconfirmed).
  void update(std::span<Detection> detections);

  // The tracks whose detections carried their id for the first time on the last update: objects
  // newly in view (a snapshot's occasion).
  const std::vector<int64_t>& newly_confirmed() const { return newly_confirmed_; }

  // Tracks alive now, confirmed or not, and tracks begun so far.
  size_t live_tracks() const { return tracks_.size(); }
  int64_t tracks_started() const { return next_id_ - 1; }

 private:
  struct Track {
    int64_t id = 0;
    int class_id = 0;
    Box box;                           // where it was last seen
    float velocity[4] = {0, 0, 0, 0};  // per frame: x1, y1, x2, y2
    int hits = 0;                      // matched frames, its first included
    int misses = 0;                    // frames since the last match
    Box predicted() const;
  };

  IouTrackerOptions options_;
  std::vector<Track> tracks_;
  std::vector<int64_t> newly_confirmed_;
  int64_t next_id_ = 1;
};

}  // namespace edgefuse
