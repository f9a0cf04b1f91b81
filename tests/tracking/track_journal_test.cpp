#include "pipeline/tracking/track_journal.h"

#include <doctest/doctest.h>

#include <vector>

using namespace edgefuse;

namespace {

Detection tracked(int64_t id, float x, float score, uint32_t zones = 0) {
  Detection d;
  d.box = {x, 10, x + 20, 60};
  d.score = score;
  d.class_id = 2;
  d.track_id = id;
  d.zone_mask = zones;
  return d;
}

TrackJournal::Frame frame_at(int64_t processed) {
  // Every third decoded frame of 30 fps, timestamps from 1 s on.
  return {.number = processed * 3, .pts_ns = 1'000'000'000 + processed * 100'000'000, .seconds = processed * 0.1};
}

}  // namespace

TEST_CASE("track journal: a track's record, closed on the frame the tracker gives it up") {
  TrackJournal journal(2);
  std::vector<TrackRecord> ended;
  // Track 5 seen on processed frames 0..3 (not on 2), unseen after; track 6 from frame 1 on.
  for (int64_t f = 0; f < 8; ++f) {
    std::vector<Detection> detections;
    if (f <= 3 && f != 2)
      detections.push_back(tracked(5, 10.0f * static_cast<float>(f), f == 1 ? 0.9f : 0.6f, 1u << f));
    if (f >= 1) detections.push_back(tracked(6, 200, 0.7f));
    detections.push_back(tracked(-1, 400, 0.95f));  // unconfirmed: no record
    const std::vector<int64_t> crossed = f == 3 ? std::vector<int64_t>{5, 5} : std::vector<int64_t>{};
    for (TrackRecord& r : journal.update(frame_at(f), detections, crossed)) {
      CHECK(f == 6);  // last seen on frame 3, unseen on 4, 5 (max_age 2), given up on 6
      ended.push_back(std::move(r));
    }
  }
  REQUIRE(ended.size() == 1);
  const TrackRecord& r = ended[0];
  CHECK(r.track_id == 5);
  CHECK(r.class_id == 2);
  CHECK(r.first_frame == 0);
  CHECK(r.last_frame == 9);
  CHECK(r.first_pts_ns == 1'000'000'000);
  CHECK(r.last_pts_ns == 1'300'000'000);
  CHECK(r.last_s - r.first_s == doctest::Approx(0.3));
  CHECK(r.sightings == 3);
  CHECK(r.best_score == doctest::Approx(0.9f));
  CHECK(r.best_frame == 3);
  CHECK(r.best_box.x1 == 10);
  CHECK(r.first_box.x1 == 0);
  CHECK(r.last_box.x1 == 30);
  CHECK(r.zone_mask == 0b1011u);
  CHECK(r.crossings == 2);
  CHECK_FALSE(r.stopped);
  CHECK(journal.open_tracks() == 1);

  const std::vector<TrackRecord> open = journal.close();
  REQUIRE(open.size() == 1);
  CHECK(open[0].track_id == 6);
  CHECK(open[0].stopped);
  CHECK(open[0].sightings == 7);
  CHECK(journal.open_tracks() == 0);
}

TEST_CASE("track journal: a track's first snapshot is kept, later ones not") {
  TrackJournal journal(5);
  std::vector<Detection> detections = {tracked(1, 0, 0.8f)};
  journal.update(frame_at(0), detections);
  journal.note_snapshot(detections, "");  // none taken
  journal.update(frame_at(1), detections);
  journal.note_snapshot(detections, "shots/a.jpg");
  detections.push_back(tracked(2, 100, 0.8f));
  journal.update(frame_at(2), detections);
  journal.note_snapshot(detections, "shots/b.jpg");
  const std::vector<TrackRecord> open = journal.close();
  REQUIRE(open.size() == 2);
  CHECK(open[0].snapshot == "shots/a.jpg");
  CHECK(open[1].snapshot == "shots/b.jpg");
}

TEST_CASE("track journal: ended tracks come back in id order") {
  TrackJournal journal(0);
  std::vector<Detection> detections;
  for (int64_t id = 40; id > 0; id -= 3) detections.push_back(tracked(id, static_cast<float>(id), 0.5f));
  journal.update(frame_at(0), detections);
  const std::vector<TrackRecord> ended = journal.update(frame_at(1), {});
  REQUIRE(ended.size() == detections.size());
  for (size_t i = 1; i < ended.size(); ++i) CHECK(ended[i - 1].track_id < ended[i].track_id);
}
