#include "pipeline/tracking/iou_tracker.h"

#include <doctest/doctest.h>

#include <set>
#include <vector>

#include "models/detect/nms.h"

using namespace edgefuse;

namespace {

Detection object(float x, float y, float w, float h, int class_id = 0, float score = 0.9f) {
  Detection d;
  d.box = {x, y, x + w, y + h};
  d.score = score;
  d.class_id = class_id;
  return d;
}

}  // namespace

TEST_CASE("tracker: two walkers keep their ids; ids appear once a track is confirmed") {
  IouTracker tracker(IouTrackerOptions{.min_iou = 0.3f, .max_age = 5, .min_hits = 2});
  std::set<int64_t> ids_a, ids_b;
  for (int frame = 0; frame < 30; ++frame) {
    // A walks right, B walks down; the frame lists them in either order.
    std::vector<Detection> frame_detections = {object(100.0f + 6 * frame, 200, 60, 150),
                                               object(600, 50.0f + 5 * frame, 60, 150)};
    if (frame % 2 == 1) std::swap(frame_detections[0], frame_detections[1]);
    tracker.update(frame_detections);
    const Detection& a = frame % 2 == 1 ? frame_detections[1] : frame_detections[0];
    const Detection& b = frame % 2 == 1 ? frame_detections[0] : frame_detections[1];
    if (frame == 0) {
      CHECK(a.track_id == -1);  // one sighting is not a track yet
      CHECK(b.track_id == -1);
      CHECK(tracker.newly_confirmed().empty());
      continue;
    }
    // Both confirm on their second sighting, and only then are they new.
    CHECK(tracker.newly_confirmed().size() == (frame == 1 ? 2u : 0u));
    ids_a.insert(a.track_id);
    ids_b.insert(b.track_id);
  }
  REQUIRE(ids_a.size() == 1);
  REQUIRE(ids_b.size() == 1);
  CHECK(*ids_a.begin() >= 1);
  CHECK(*ids_b.begin() >= 1);
  CHECK(*ids_a.begin() != *ids_b.begin());
  CHECK(tracker.live_tracks() == 2);
  CHECK(tracker.tracks_started() == 2);
}

TEST_CASE("tracker: the predicted box follows an object that speeds up past the boxes' overlap") {
  // 15 px a frame on 60 px wide boxes (consecutive boxes overlap by IoU 0.6), then 35 px a frame
  // (IoU 0.26, under min_iou): only the track's predicted position keeps matching it.
  IouTracker tracker(IouTrackerOptions{.min_iou = 0.3f, .max_age = 5, .min_hits = 2});
  std::set<int64_t> ids;
  float x = 0, previous_x = 0;
  for (int frame = 0; frame < 20; ++frame) {
    previous_x = x;
    x += frame < 6 ? 15.0f : 35.0f;
    std::vector<Detection> detections = {object(x, 100, 60, 120)};
    if (frame >= 8) CHECK(iou(object(previous_x, 100, 60, 120).box, detections[0].box) < 0.3f);
    tracker.update(detections);
    if (frame >= 1) ids.insert(detections[0].track_id);
  }
  CHECK(ids.size() == 1);
  CHECK(*ids.begin() >= 1);
  CHECK(tracker.live_tracks() == 1);
}

TEST_CASE("tracker: an object hidden for a few frames keeps its id, one hidden too long gets a new one") {
  IouTracker tracker(IouTrackerOptions{.min_iou = 0.3f, .max_age = 4, .min_hits = 2});
  const auto at = [](int frame) { return object(50.0f + 4 * frame, 80, 50, 100); };
  int64_t id = -1;
  for (int frame = 0; frame < 10; ++frame) {
    std::vector<Detection> d = {at(frame)};
    tracker.update(d);
    id = d[0].track_id;
  }
  REQUIRE(id >= 1);
  // Occluded for 4 frames (max_age), then seen where it would be: the same id.
  for (int frame = 10; frame < 14; ++frame) {
    std::vector<Detection> none;
    tracker.update(none);
  }
  std::vector<Detection> back = {at(14)};
  tracker.update(back);
  CHECK(back[0].track_id == id);
  // Occluded for 5 frames: the track has ended; the object starts over (unconfirmed, then a new id).
  for (int frame = 15; frame < 20; ++frame) {
    std::vector<Detection> none;
    tracker.update(none);
  }
  CHECK(tracker.live_tracks() == 0);
  std::vector<Detection> again = {at(20)};
  tracker.update(again);
  CHECK(again[0].track_id == -1);
  std::vector<Detection> again2 = {at(21)};
  tracker.update(again2);
  CHECK(again2[0].track_id > id);
}

TEST_CASE("tracker: classes never share a track, and a one-frame false detection never takes an id") {
  IouTracker tracker(IouTrackerOptions{.min_iou = 0.3f, .max_age = 3, .min_hits = 2});
  int64_t person = -1, dog = -1;
  for (int frame = 0; frame < 8; ++frame) {
    // A person and a dog on almost the same box; frame 3 adds a spurious car far away.
    std::vector<Detection> d = {object(100.0f + frame, 100, 80, 160, 0), object(102.0f + frame, 101, 80, 160, 16)};
    if (frame == 3) d.push_back(object(900, 500, 40, 40, 2));
    tracker.update(d);
    if (frame == 3) CHECK(d[2].track_id == -1);
    if (frame >= 1) {
      if (person < 0) person = d[0].track_id, dog = d[1].track_id;
      CHECK(d[0].track_id == person);
      CHECK(d[1].track_id == dog);
    }
  }
  CHECK(person >= 1);
  CHECK(dog >= 1);
  CHECK(person != dog);
}

TEST_CASE("tracker: crossing objects of one class are told apart by their predicted paths") {
  // Two people walk towards each other on the same row and pass with heavy overlap; their
  // velocities keep each one's id through the crossing.
  IouTracker tracker(IouTrackerOptions{.min_iou = 0.2f, .max_age = 5, .min_hits = 2});
  int64_t left = -1, right = -1;
  for (int frame = 0; frame < 40; ++frame) {
    Detection l = object(100.0f + 10 * frame, 300, 60, 160), r = object(500.0f - 10 * frame, 305, 60, 160);
    std::vector<Detection> d = {l, r};
    tracker.update(d);
    if (frame == 2) {
      left = d[0].track_id;
      right = d[1].track_id;
    }
    if (frame > 2) {
      CHECK(d[0].track_id == left);
      CHECK(d[1].track_id == right);
    }
  }
  CHECK(left != right);
}
