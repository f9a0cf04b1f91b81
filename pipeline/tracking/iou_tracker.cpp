#include "pipeline/tracking/iou_tracker.h"

#include <algorithm>
#include <cstdint>

#include "models/detect/nms.h"

namespace edgefuse {

namespace {

// Weight of the newest corner displacement in a track's velocity: enough smoothing that one noisy
// box does not fling the prediction, little enough to follow a walker turning within a few frames.
constexpr float kVelocityGain = 0.5f;

struct Candidate {
  float iou;
  size_t track, detection;
};

}  // namespace

Box IouTracker::Track::predicted() const {
  // A track unmatched for `misses` frames has moved misses + 1 steps by the frame being matched.
  const auto steps = static_cast<float>(misses + 1);
  Box p{box.x1 + velocity[0] * steps, box.y1 + velocity[1] * steps, box.x2 + velocity[2] * steps,
        box.y2 + velocity[3] * steps};
  // Opposite corners that crossed (a shrinking box extrapolated too far) leave an empty box.
  p.x2 = std::max(p.x2, p.x1);
  p.y2 = std::max(p.y2, p.y1);
  return p;
}

void IouTracker::update(std::span<Detection> detections) {
  newly_confirmed_.clear();
  std::vector<Candidate> candidates;
  for (size_t t = 0; t < tracks_.size(); ++t) {
    const Box predicted = tracks_[t].predicted();
    for (size_t d = 0; d < detections.size(); ++d) {
      if (tracks_[t].class_id != detections[d].class_id) continue;
      const float overlap = iou(predicted, detections[d].box);
      if (overlap >= options_.min_iou) candidates.push_back({overlap, t, d});
    }
  }
  // Highest overlap first; ties to the older track (lower id), then the earlier detection, so that
  // the result never depends on the sort's handling of equal keys.
  std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
    if (a.iou != b.iou) return a.iou > b.iou;
    if (tracks_[a.track].id != tracks_[b.track].id) return tracks_[a.track].id < tracks_[b.track].id;
    return a.detection < b.detection;
  });

  constexpr size_t kNone = SIZE_MAX;
  std::vector<size_t> track_of(detections.size(), kNone);
  std::vector<bool> track_matched(tracks_.size(), false);
  for (const Candidate& c : candidates) {
    if (track_matched[c.track] || track_of[c.detection] != kNone) continue;
    track_matched[c.track] = true;
    track_of[c.detection] = c.track;
  }

  for (size_t d = 0; d < detections.size(); ++d) {
    Detection& detection = detections[d];
    detection.track_id = -1;
    if (track_of[d] == kNone) continue;
    Track& track = tracks_[track_of[d]];
    const Box& seen = detection.box;
    const auto steps = static_cast<float>(track.misses + 1);
    const float moved[4] = {(seen.x1 - track.box.x1) / steps, (seen.y1 - track.box.y1) / steps,
                            (seen.x2 - track.box.x2) / steps, (seen.y2 - track.box.y2) / steps};
    for (int i = 0; i < 4; ++i) {
      // The first displacement is the only estimate there is; later ones are blended in.
      track.velocity[i] =
          track.hits == 1 ? moved[i] : track.velocity[i] + kVelocityGain * (moved[i] - track.velocity[i]);
    }
    track.box = seen;
    track.hits += 1;
    track.misses = 0;
    if (track.hits >= options_.min_hits) detection.track_id = track.id;
    if (track.hits == options_.min_hits) newly_confirmed_.push_back(track.id);
  }
  for (size_t t = 0; t < tracks_.size(); ++t) {
    if (!track_matched[t]) tracks_[t].misses += 1;
  }
  std::erase_if(tracks_, [&](const Track& track) { return track.misses > options_.max_age; });

  // Unmatched detections start tracks.
  for (size_t d = 0; d < detections.size(); ++d) {
    if (track_of[d] != kNone) continue;
    Track track;
    track.id = next_id_++;
    track.class_id = detections[d].class_id;
    track.box = detections[d].box;
    track.hits = 1;
    tracks_.push_back(track);
    if (options_.min_hits <= 1) {
      detections[d].track_id = track.id;
      newly_confirmed_.push_back(track.id);
    }
  }
}

}  // namespace edgefuse
