#include "pipeline/zones/zone_monitor.h"

#include <doctest/doctest.h>

#include <vector>

#include "pipeline/tracking/iou_tracker.h"

using namespace edgefuse;

namespace {

constexpr int kWidth = 1000, kHeight = 500;

// A 40 x 100 px box standing with its feet at (fx, fy) in frame fractions.
Detection standing_at(double fx, double fy, int64_t track_id, int class_id = 0) {
  Detection d;
  const auto x = static_cast<float>(fx * kWidth), y = static_cast<float>(fy * kHeight);
  d.box = {x - 20, y - 100, x + 20, y};
  d.score = 0.9f;
  d.class_id = class_id;
  d.track_id = track_id;
  return d;
}

// Left and right halves, and a line down the middle drawn top to bottom (so a move to the left,
// from the line's left to its right as drawn, is forward).
ZoneMonitor halves_and_middle(int max_age = 3, std::vector<int> line_classes = {}) {
  std::vector<Zone> zones = {{"left", {{0, 0}, {0.5, 0}, {0.5, 1}, {0, 1}}, {}},
                             {"right", {{0.5, 0}, {1, 0}, {1, 1}, {0.5, 1}}, {}}};
  std::vector<CountingLine> lines = {{"middle", {0.5, 0.1}, {0.5, 0.9}, std::move(line_classes)}};
  return ZoneMonitor(std::move(zones), std::move(lines), max_age);
}

// The next frame, 0.1 s after the previous one (10 fps).
ZoneActivity step(ZoneMonitor& monitor, std::vector<Detection> detections) {
  static thread_local double seconds = 0;
  seconds += 0.1;
  return monitor.update(detections, kWidth, kHeight, seconds);
}

}  // namespace

TEST_CASE("zones: a walker crossing the middle enters one half, leaves the other, crosses once") {
  ZoneMonitor monitor = halves_and_middle();
  std::vector<ZoneTransition> transitions;
  std::vector<LineCrossing> crossings;
  // Right to left, 0.05 per frame, feet at y = 0.6.
  for (int frame = 0; frame <= 10; ++frame) {
    std::vector<Detection> detections = {standing_at(0.76 - 0.05 * frame, 0.6, 4)};
    const ZoneActivity activity = monitor.update(detections, kWidth, kHeight, 0.5 * frame);
    CHECK(detections[0].zone_mask == (0.76 - 0.05 * frame < 0.5 ? 1u : 2u));
    transitions.insert(transitions.end(), activity.transitions.begin(), activity.transitions.end());
    crossings.insert(crossings.end(), activity.crossings.begin(), activity.crossings.end());
  }
  REQUIRE(transitions.size() == 3);
  CHECK((transitions[0].zone == 1 && transitions[0].event == ZoneEvent::kEnter));  // its first frame, inside
  CHECK((transitions[1].zone == 1 && transitions[1].event == ZoneEvent::kLeave));
  CHECK((transitions[2].zone == 0 && transitions[2].event == ZoneEvent::kEnter));
  // In the right half on frames 0..5 (x 0.76 .. 0.51), seen outside it on frame 6: 3 s at 2 fps.
  CHECK(transitions[1].dwell_s == doctest::Approx(3.0));
  CHECK(transitions[2].dwell_s == 0);
  REQUIRE(crossings.size() == 1);
  CHECK(crossings[0].direction == CrossingDirection::kForward);
  CHECK(crossings[0].track_id == 4);
  const ZoneTotals totals = monitor.totals();
  CHECK(totals.entries == std::vector<int64_t>{1, 1});
  CHECK(totals.crossings[0][0] == 1);
  CHECK(totals.crossings[0][1] == 0);
  CHECK(totals.occupancy == std::vector<int>{1, 0});
}

TEST_CASE("zones: hesitating on the line counts once; turning back counts the other way") {
  ZoneMonitor monitor = halves_and_middle();
  int forward = 0, backward = 0;
  // Right, onto the line for three frames, left (a crossing), back onto it, right again.
  for (const double x : {0.6, 0.5, 0.5, 0.5, 0.4, 0.5, 0.55, 0.45, 0.45}) {
    for (const LineCrossing& c : step(monitor, {standing_at(x, 0.5, 1)}).crossings) {
      (c.direction == CrossingDirection::kForward ? forward : backward)++;
    }
  }
  CHECK(forward == 2);   // 0.6 -> 0.4 and 0.55 -> 0.45
  CHECK(backward == 1);  // 0.4 -> 0.55
}

TEST_CASE("zones: moves beside the segment, untracked objects and other classes do not cross") {
  ZoneMonitor monitor = halves_and_middle(3, {0});
  int crossings = 0;
  for (const double x : {0.7, 0.3, 0.7}) {
    crossings += static_cast<int>(step(monitor, {standing_at(x, 0.95, 1)}).crossings.size());    // below its end
    crossings += static_cast<int>(step(monitor, {standing_at(x, 0.5, -1)}).crossings.size());    // no track yet
    crossings += static_cast<int>(step(monitor, {standing_at(x, 0.5, 2, 1)}).crossings.size());  // class 1
  }
  CHECK(crossings == 0);
  // Occupancy needs no track: the untracked walker was counted in its half.
  std::vector<Detection> untracked = {standing_at(0.3, 0.5, -1)};
  const ZoneActivity activity = monitor.update(untracked, kWidth, kHeight, 100);
  CHECK(activity.occupancy == std::vector<int>{1, 0});
  CHECK(untracked[0].zone_mask == 1u);
  CHECK(activity.transitions.empty());
}

TEST_CASE("zones: a track unseen for more than max_age frames leaves its zones") {
  ZoneMonitor monitor = halves_and_middle(2);
  CHECK(step(monitor, {standing_at(0.2, 0.5, 9, 3)}).transitions.size() == 1);
  CHECK(step(monitor, {}).transitions.empty());
  CHECK(step(monitor, {}).transitions.empty());  // 2 frames unseen: the tracker may still match it
  const ZoneActivity third = step(monitor, {});
  REQUIRE(third.transitions.size() == 1);
  CHECK(third.transitions[0].zone == 0);
  CHECK(third.transitions[0].event == ZoneEvent::kLeave);
  CHECK(third.transitions[0].dwell_s == 0);  // seen inside on one frame only
  CHECK(third.transitions[0].track_id == 9);
  CHECK(third.transitions[0].class_id == 3);
}

TEST_CASE("zones: a zone watching some classes ignores the others") {
  std::vector<Zone> zones = {{"cars-only", {{0, 0}, {1, 0}, {1, 1}, {0, 1}}, {2}}};
  ZoneMonitor monitor(std::move(zones), {}, 5);
  std::vector<Detection> detections = {standing_at(0.5, 0.5, 1, 0), standing_at(0.5, 0.5, 2, 2)};
  const ZoneActivity activity = monitor.update(detections, kWidth, kHeight, 0);
  CHECK(detections[0].zone_mask == 0u);
  CHECK(detections[1].zone_mask == 1u);
  CHECK(activity.occupancy == std::vector<int>{1});
  REQUIRE(activity.transitions.size() == 1);
  CHECK(activity.transitions[0].track_id == 2);
}

TEST_CASE("zones: objects are counted per class too; a class once seen stays listed at 0") {
  ZoneMonitor monitor = halves_and_middle();
  // Left: two people (class 0) and a car (class 2); right: one person. Untracked counts too.
  std::vector<Detection> detections = {standing_at(0.1, 0.5, 1, 0), standing_at(0.2, 0.5, -1, 2),
                                       standing_at(0.3, 0.5, 3, 0), standing_at(0.8, 0.5, 4, 0)};
  ZoneActivity activity = step(monitor, detections);
  CHECK(activity.occupancy == std::vector<int>{3, 1});
  REQUIRE(activity.class_counts.size() == 2);
  CHECK(activity.class_counts[0] == std::vector<ClassCount>{{0, 2}, {2, 1}});  // by class id
  CHECK(activity.class_counts[1] == std::vector<ClassCount>{{0, 1}});
  // The car drives off and the right is empty: this frame lists what stands now, the totals also
  // what stood before, at 0.
  detections = {standing_at(0.1, 0.5, 1, 0), standing_at(0.3, 0.5, 3, 0)};
  activity = step(monitor, detections);
  CHECK(activity.class_counts[0] == std::vector<ClassCount>{{0, 2}});
  CHECK(activity.class_counts[1].empty());
  const ZoneTotals totals = monitor.totals();
  CHECK(totals.class_counts[0] == std::vector<ClassCount>{{0, 2}, {2, 0}});
  CHECK(totals.class_counts[1] == std::vector<ClassCount>{{0, 0}});
}

TEST_CASE("zones: with the tracker, two walkers passing each other are each counted once per crossing") {
  IouTracker tracker(IouTrackerOptions{.min_iou = 0.3f, .max_age = 5, .min_hits = 2});
  ZoneMonitor monitor = halves_and_middle(5);
  int forward = 0, backward = 0;
  for (int frame = 0; frame < 40; ++frame) {
    // One walks left along y = 0.4, the other right along y = 0.8 (their boxes never overlap).
    std::vector<Detection> detections = {standing_at(0.9 - 0.02 * frame, 0.4, -1),
                                         standing_at(0.1 + 0.02 * frame, 0.8, -1)};
    tracker.update(detections);
    for (const LineCrossing& c : monitor.update(detections, kWidth, kHeight, frame / 10.0).crossings) {
      (c.direction == CrossingDirection::kForward ? forward : backward)++;
    }
  }
  CHECK(forward == 1);
  CHECK(backward == 1);
}

TEST_CASE("zones: a track staying loiter_s seconds is reported once per stay, with its dwell") {
  std::vector<Zone> zones = {{"door", {{0, 0}, {0.5, 0}, {0.5, 1}, {0, 1}}, {}, 2.0},
                             {"yard", {{0.5, 0}, {1, 0}, {1, 1}, {0.5, 1}}, {}, 0.0}};
  ZoneMonitor monitor(std::move(zones), {}, 3);
  std::vector<ZoneTransition> seen;
  std::vector<double> at;
  // 4 fps: at the door for 0 .. 3.5 s, in the yard 3.75 .. 9.75 s, back at the door 10 .. 11.75 s
  // (too short to loiter), unseen after.
  for (int frame = 0; frame < 48; ++frame) {
    const double x = frame < 15 ? 0.2 : frame < 40 ? 0.8 : 0.2;
    std::vector<Detection> detections = {standing_at(x, 0.5, 7)};
    for (const ZoneTransition& t : monitor.update(detections, kWidth, kHeight, frame * 0.25).transitions) {
      seen.push_back(t);
      at.push_back(frame * 0.25);
    }
  }
  for (int frame = 48; frame < 52; ++frame) {  // unseen: the track ends after more than 3 frames
    std::vector<Detection> none;
    for (const ZoneTransition& t : monitor.update(none, kWidth, kHeight, frame * 0.25).transitions) {
      seen.push_back(t);
      at.push_back(frame * 0.25);
    }
  }
  REQUIRE(seen.size() == 7);
  CHECK((seen[0].zone == 0 && seen[0].event == ZoneEvent::kEnter && at[0] == 0));
  CHECK((seen[1].zone == 0 && seen[1].event == ZoneEvent::kLoiter && at[1] == 2.0));
  CHECK(seen[1].dwell_s == doctest::Approx(2.0));
  CHECK((seen[2].zone == 0 && seen[2].event == ZoneEvent::kLeave && at[2] == 3.75));
  CHECK(seen[2].dwell_s == doctest::Approx(3.75));
  CHECK((seen[3].zone == 1 && seen[3].event == ZoneEvent::kEnter && at[3] == 3.75));
  // The yard never reports loitering (loiter_s 0), however long the stay.
  CHECK((seen[4].zone == 1 && seen[4].event == ZoneEvent::kLeave && at[4] == 10.0));
  CHECK(seen[4].dwell_s == doctest::Approx(6.25));
  CHECK((seen[5].zone == 0 && seen[5].event == ZoneEvent::kEnter && at[5] == 10.0));
  // Its track ends at the door 1.75 s into the second stay (last seen at 11.75 s): no loitering.
  CHECK((seen[6].zone == 0 && seen[6].event == ZoneEvent::kLeave && at[6] == 12.75));
  CHECK(seen[6].dwell_s == doctest::Approx(1.75));
  const ZoneTotals totals = monitor.totals();
  CHECK(totals.loiterings == std::vector<int64_t>{1, 0});
  CHECK(totals.entries == std::vector<int64_t>{2, 1});
}

TEST_CASE("zones: a track that ends inside leaves with the dwell up to its last sighting") {
  std::vector<Zone> zones = {{"door", {{0, 0}, {1, 0}, {1, 1}, {0, 1}}, {}, 1.0}};
  ZoneMonitor monitor(std::move(zones), {}, 2);
  std::vector<ZoneTransition> seen;
  for (int frame = 0; frame < 10; ++frame) {
    std::vector<Detection> detections;
    if (frame < 6) detections.push_back(standing_at(0.5, 0.5, 3));
    const ZoneActivity activity = monitor.update(detections, kWidth, kHeight, frame * 0.5);
    seen.insert(seen.end(), activity.transitions.begin(), activity.transitions.end());
  }
  REQUIRE(seen.size() == 3);
  CHECK(seen[1].event == ZoneEvent::kLoiter);
  CHECK(seen[1].dwell_s == doctest::Approx(1.0));
  CHECK(seen[2].event == ZoneEvent::kLeave);
  CHECK(seen[2].dwell_s == doctest::Approx(2.5));  // last seen at 2.5 s, reported at 4 s
}

TEST_CASE("zones: stream time taken as earlier than the previous frame's stays put") {
  std::vector<Zone> zones = {{"top", {{0, 0}, {1, 0}, {1, 0.5}, {0, 0.5}}, {}, 0.0}};
  ZoneMonitor monitor(std::move(zones), {}, 5);
  std::vector<Detection> inside = {standing_at(0.5, 0.3, 1)}, none;
  monitor.update(inside, kWidth, kHeight, 5.0);
  monitor.update(inside, kWidth, kHeight, 1.0);  // a clock gone backwards: still 5 s
  const ZoneActivity outside = monitor.update(none, kWidth, kHeight, 6.0);
  CHECK(outside.transitions.empty());
  std::vector<Detection> away = {standing_at(0.5, 0.8, 1)};
  const ZoneActivity left = monitor.update(away, kWidth, kHeight, 7.0);
  REQUIRE(left.transitions.size() == 1);
  CHECK(left.transitions[0].dwell_s == doctest::Approx(2.0));
}
