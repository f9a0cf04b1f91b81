// The daemon end to end on the real 1080p30 clip and YOLOX-nano: events for every processed frame,
// exact accounting, track ids that follow the pedestrians, zones and a counting line, the same
// detections as `edgefuse detect` on the decoded frame, batching across streams, RTSP from a
// loopback server, and broken streams beside a good one.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include <opencv2/imgcodecs.hpp>

#include "fusion/pass_manager.h"
#include "models/detector/detector.h"
#include "models/onnx/onnx_importer.h"
#include "tests/models/yolo_redress.h"
#include "tests/pipeline/daemon_test_support.h"
#include "tests/support/assets.h"

namespace edgefuse::test {
namespace {

constexpr int kClipFrames = 795;  // data/README.md
constexpr int kInterval = 25;     // 32 processed frames: 0, 25, ..., 775

std::string model_yaml(const std::filesystem::path& model, int max_batch = 1) {
  return "models:\n  - name: people\n    path: " + model.string() +
         "\n    threads: 1\n    max-batch: " + std::to_string(max_batch) + "\n    batch-timeout-ms: 20\n";
}

// Fast (not real-time) decoding with a queue deep enough that no due frame is ever dropped, so
// which frames are processed is deterministic.
std::string clip_stream_yaml(const std::string& name, const std::filesystem::path& clip, int interval = kInterval) {
  return "  - name: " + name + "\n    uri: " + clip.string() + "\n    model: people\n    realtime: false\n" +
         "    inference-interval: " + std::to_string(interval) + "\n    queue-size: 64\n";
}

const std::string kEventsYaml = "events:\n  path: \"@EVENTS@\"\n  empty-frames: true\nstats-interval-s: 0\n";

// The value of one series (name and labels, as /metrics writes them) on the run's /metrics page.
double metric_value(const DaemonRun& run, const std::string& series) {
  const size_t at = run.metrics.find(series + " ");
  REQUIRE_MESSAGE(at != std::string::npos, series);
  return std::stod(run.metrics.substr(at + series.size() + 1));
}

float iou(const nlohmann::json& box, const Box& b) {
  const Box a{box[0].get<float>(), box[1].get<float>(), box[2].get<float>(), box[3].get<float>()};
  const float w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1), h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float inter = w > 0 && h > 0 ? w * h : 0;
  return inter / (a.area() + b.area() - inter);
}

void check_accounting(const StreamReport& report) {
  CHECK(report.frames_in == report.skipped + report.dropped + report.processed);
}

// The one-stream run is the baseline for several tests; run it once.
const DaemonRun& single_stream_run(const std::filesystem::path& model, const std::filesystem::path& clip) {
  static const DaemonRun run =
      run_daemon(model_yaml(model) + "streams:\n" + clip_stream_yaml("street", clip) + kEventsYaml);
  return run;
}

TEST_CASE("every processed frame of the clip yields an event, people are found, accounting is exact") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  const DaemonRun& run = single_stream_run(model, clip);
  REQUIRE(run.status.is_ok());
  const StreamReport& report = run.report("street");
  CHECK(report.error.empty());
  CHECK(report.frames_in == kClipFrames);
  check_accounting(report);
  CHECK(report.dropped == 0);
  CHECK(report.processed == (kClipFrames + kInterval - 1) / kInterval);
  CHECK(report.failed == 0);
  CHECK(report.events == report.processed);
  REQUIRE(run.events.size() == static_cast<size_t>(report.processed));

  int with_people = 0;
  for (size_t i = 0; i < run.events.size(); ++i) {
    const nlohmann::json& event = run.events[i];
    CHECK(event.at("frame") == static_cast<int64_t>(i) * kInterval);
    CHECK(event.at("width") == 1920);
    CHECK(event.at("height") == 1080);
    CHECK(event.at("latency_ms").get<double>() >= 0);
    bool person = false;
    for (const nlohmann::json& detection : event.at("detections")) {
      person = person || (detection.at("label") == "person" && detection.at("score").get<double>() > 0.5);
    }
    with_people += person ? 1 : 0;
  }
  // Pedestrians walk through the whole clip.
  CHECK(with_people >= static_cast<int>(run.events.size()) - 1);
}

// The clip at 10 fps with tracking, zones on the left and right halves of the image (the left one
// reporting stays of 2.05 s: between two processed frames, so rounding cannot decide) and a line
// down its middle, and a track event per track; run once for the tests that read it.
const DaemonRun& tracked_run(const std::filesystem::path& model, const std::filesystem::path& clip) {
  const std::string stream = "  - name: street\n    uri: " + clip.string() +
                             "\n    model: people\n    realtime: false\n    inference-interval: 3\n"
                             "    queue-size: 64\n    classes: [person]\n"
                             "    zones:\n"
                             "      - name: left\n        points: [[0, 0], [0.5, 0], [0.5, 1], [0, 1]]\n"
                             "        loiter-s: 2.05\n"
                             "      - name: right\n        points: [[0.5, 0], [1, 0], [1, 1], [0.5, 1]]\n"
                             "    lines:\n"
                             "      - name: middle\n        points: [[0.5, 0], [0.5, 1]]\n";
  static const DaemonRun run =
      run_daemon(model_yaml(model) + "streams:\n" + stream +
                 "events:\n  path: \"@EVENTS@\"\n  empty-frames: true\n  tracks: true\nstats-interval-s: 0\n");
  return run;
}

// The sanitizers run 265 inferences at about 0.6 s each; the tracker's and the zones' logic is
// covered by test_tracking and test_zones, which they run.
#if defined(EDGEFUSE_SANITIZED)
#define SKIP_WHEN_SANITIZED()                    \
  MESSAGE("skipped: too slow under sanitizers"); \
  return
#else
#define SKIP_WHEN_SANITIZED() (void)0
#endif

TEST_CASE("pedestrians keep their track ids from frame to frame at 10 fps") {
  SKIP_WHEN_SANITIZED();
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  const DaemonRun& run = tracked_run(model, clip);
  REQUIRE(run.status.is_ok());
  const StreamReport& report = run.report("street");
  CHECK(report.dropped == 0);
  REQUIRE(run.events.size() == static_cast<size_t>(report.processed));

  // Per track: the processed frames it labelled, first and last.
  std::map<int64_t, std::pair<int64_t, int64_t>> spans;
  std::map<int64_t, int> sightings;
  int people = 0, labelled = 0;
  for (const nlohmann::json& event : run.events) {
    const int64_t frame = event.at("frame").get<int64_t>() / 3;
    std::set<int64_t> in_frame;
    for (const nlohmann::json& detection : event.at("detections")) {
      if (detection.at("score").get<double>() < 0.5) continue;
      ++people;
      if (!detection.contains("track_id")) continue;
      ++labelled;
      const int64_t id = detection.at("track_id").get<int64_t>();
      CHECK(in_frame.insert(id).second);  // one detection per track and frame
      auto [it, fresh] = spans.try_emplace(id, frame, frame);
      it->second.second = frame;
      ++sightings[id];
    }
  }
  int long_tracks = 0;
  for (const auto& [id, span] : spans) long_tracks += span.second - span.first >= 30 ? 1 : 0;
  MESSAGE(people, " confident people, ", labelled, " with a track id, ", spans.size(), " tracks, ", long_tracks,
          " of them over 3 s");
  // The clip's pedestrians walk for many seconds in view: most sightings continue a track, few
  // tracks are needed for them, and several tracks last over 3 s (30 processed frames).
  CHECK(labelled >= people * 8 / 10);
  CHECK(static_cast<int>(spans.size()) * 8 <= labelled);
  CHECK(long_tracks >= 5);
}

TEST_CASE("zones and a counting line on the clip agree with the boxes in the events") {
  SKIP_WHEN_SANITIZED();
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  const DaemonRun& run = tracked_run(model, clip);
  REQUIRE(run.status.is_ok());
  REQUIRE_FALSE(run.events.empty());

  // Recomputed here from each detection's box: which half its bottom centre is in; per track, the
  // side of the middle it was last seen on, and so the crossings expected; enter/leave alternating.
  const auto left_of_middle = [](const nlohmann::json& box) {
    return (box[0].get<double>() + box[2].get<double>()) / 2 < 1920 / 2.0;
  };
  std::map<int64_t, bool> last_side_left;
  std::set<std::pair<int64_t, int64_t>> expected_crossings, reported_crossings;  // (frame, track)
  std::map<std::pair<int64_t, std::string>, bool> inside;                        // (track, zone) -> entered
  // Per (track, zone) stay: when it entered, when it was last seen inside, whether it loitered.
  struct Stay {
    double entered_s = 0, last_inside_s = 0;
    bool loitered = false;
  };
  std::map<std::pair<int64_t, std::string>, Stay> stays;
  std::set<std::pair<int64_t, int64_t>> expected_loiters, reported_loiters;  // (frame, track)
  constexpr double kDwellTolerance = 0.006;                                  // dwell_s has 2 decimals, pts_ms 3
  int forward = 0, backward = 0, entries = 0, leaves = 0;
  std::map<std::string, int> zone_entries, zone_leaves;
  std::map<std::string, double> zone_dwell_sum;
  for (const nlohmann::json& event : run.events) {
    const int64_t frame = event.at("frame").get<int64_t>();
    int left = 0, right = 0;
    std::map<int64_t, bool> track_left;
    for (const nlohmann::json& detection : event.at("detections")) {
      const bool is_left = left_of_middle(detection.at("box"));
      (is_left ? left : right)++;
      REQUIRE(detection.contains("zones"));
      CHECK(detection.at("zones") == nlohmann::json::array({is_left ? "left" : "right"}));
      if (!detection.contains("track_id")) continue;
      const int64_t track = detection.at("track_id").get<int64_t>();
      track_left[track] = is_left;
      const auto last = last_side_left.find(track);
      if (last != last_side_left.end() && last->second != is_left) expected_crossings.insert({frame, track});
      last_side_left[track] = is_left;
    }
    CHECK(event.at("zone_counts") == nlohmann::json({{"left", left}, {"right", right}}));
    // By class: people only (the stream reports no other class), listed where some stand.
    const auto people = [](int count) {
      return count > 0 ? nlohmann::json({{"person", count}}) : nlohmann::json::object();
    };
    CHECK(event.at("zone_class_counts") == nlohmann::json({{"left", people(left)}, {"right", people(right)}}));
    for (const nlohmann::json& crossing : event.value("line_crossings", nlohmann::json::array())) {
      CHECK(crossing.at("line") == "middle");
      const int64_t track = crossing.at("track_id").get<int64_t>();
      reported_crossings.insert({frame, track});
      // Drawn top to bottom, forward is moving left.
      REQUIRE(track_left.count(track) == 1);
      const bool forward_crossing = crossing.at("direction") == "forward";
      CHECK(forward_crossing == track_left.at(track));
      (forward_crossing ? forward : backward)++;
    }
    const double now_s = event.at("pts_ms").get<double>() / 1000;
    for (const nlohmann::json& change : event.value("zone_events", nlohmann::json::array())) {
      const int64_t track = change.at("track_id").get<int64_t>();
      const std::string zone = change.at("zone").get<std::string>();
      Stay& stay = stays[{track, zone}];
      if (change.at("event") == "loiter") {
        CHECK(zone == "left");
        reported_loiters.insert({frame, track});
        CHECK(std::abs(change.at("dwell_s").get<double>() - (now_s - stay.entered_s)) <= kDwellTolerance);
        continue;
      }
      const bool entered = change.at("event") == "enter";
      CHECK(inside[{track, zone}] != entered);  // enter, leave, enter, ...
      inside[{track, zone}] = entered;
      (entered ? entries : leaves)++;
      zone_entries[zone] += entered ? 1 : 0;
      if (entered) {
        // A track entering is seen in that zone on this frame.
        CHECK(track_left.at(track) == (zone == "left"));
        stay = {now_s, now_s, false};
        continue;
      }
      // Its stay lasted until this frame, or (its track ended unseen) until it was last seen.
      const double until_s = track_left.count(track) == 1 ? now_s : stay.last_inside_s;
      CHECK(std::abs(change.at("dwell_s").get<double>() - (until_s - stay.entered_s)) <= kDwellTolerance);
      ++zone_leaves[zone];
      zone_dwell_sum[zone] += change.at("dwell_s").get<double>();
    }
    for (const auto& [track, is_left] : track_left) {
      Stay& stay = stays[{track, is_left ? "left" : "right"}];
      stay.last_inside_s = now_s;
      if (is_left && !stay.loitered && now_s - stay.entered_s >= 2.05) {
        expected_loiters.insert({frame, track});
        stay.loitered = true;
      }
    }
  }
  MESSAGE(forward, " crossings forward (leftwards), ", backward, " backward; ", entries, " zone entries, ", leaves,
          " leaves, ", reported_loiters.size(), " stays over 2.05 s on the left");
  CHECK(reported_crossings == expected_crossings);
  CHECK(reported_loiters == expected_loiters);
  CHECK(reported_loiters.size() >= 3);  // pedestrians linger that long on either side
  // Pedestrians cross the plaza both ways during the clip.
  CHECK(forward >= 2);
  CHECK(backward >= 2);
  CHECK(entries >= forward + backward);

  // The metrics count the same.
  CHECK(metric_value(run, R"(edgefuse_line_crossings_total{stream="street",line="middle",direction="forward"})") ==
        forward);
  CHECK(metric_value(run, R"(edgefuse_line_crossings_total{stream="street",line="middle",direction="backward"})") ==
        backward);
  CHECK(run.streams.at("streams").at(0).at("lines").at("middle") ==
        nlohmann::json({{"forward", forward}, {"backward", backward}}));
  for (const char* zone : {"left", "right"}) {
    CAPTURE(zone);
    const std::string labels = std::string(R"({stream="street",zone=")") + zone + "\"}";
    CHECK(metric_value(run, "edgefuse_zone_entries_total" + labels) == zone_entries[zone]);
    // Every stay that ended, in the dwell histogram (the events round each to 0.01 s).
    CHECK(metric_value(run, "edgefuse_zone_dwell_seconds_count" + labels) == zone_leaves[zone]);
    CHECK(std::abs(metric_value(run, "edgefuse_zone_dwell_seconds_sum" + labels) - zone_dwell_sum[zone]) <=
          0.005 * zone_leaves[zone] + 1e-6);
    CHECK(metric_value(run, "edgefuse_zone_loiterings_total" + labels) ==
          (zone == std::string("left") ? static_cast<double>(reported_loiters.size()) : 0.0));
    CHECK(metric_value(run, "edgefuse_zone_objects" + labels) ==
          run.events.back().at("zone_counts").at(zone).get<int>());
    const std::string class_labels = std::string(R"({stream="street",zone=")") + zone + R"(",class="person"})";
    CHECK(metric_value(run, "edgefuse_zone_class_objects" + class_labels) ==
          run.events.back().at("zone_class_counts").at(zone).value("person", 0));
    // /streams says the same.
    const nlohmann::json& listed = run.streams.at("streams").at(0).at("zones").at(zone);
    CHECK(listed.at("objects") == run.events.back().at("zone_counts").at(zone));
    CHECK(listed.at("classes") == run.events.back().at("zone_class_counts").at(zone));
    CHECK(listed.at("entries") == zone_entries[zone]);
    CHECK(listed.at("loiterings") == metric_value(run, "edgefuse_zone_loiterings_total" + labels));
  }
}

TEST_CASE("track events: one per track, agreeing with its detections, after the frame it was given up on") {
  SKIP_WHEN_SANITIZED();
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  const DaemonRun& run = tracked_run(model, clip);
  REQUIRE(run.status.is_ok());
  REQUIRE_FALSE(run.events.empty());

  // Each track's story, read from the detection events.
  struct Seen {
    int64_t first_frame = -1, last_frame = -1, sightings = 0, crossings = 0;
    double first_s = 0, last_s = 0, best_score = 0;
    std::set<std::string> zones;
    nlohmann::json first_box, last_box;
  };
  std::map<int64_t, Seen> seen;
  for (const nlohmann::json& event : run.events) {
    const int64_t frame = event.at("frame").get<int64_t>();
    const double now_s = event.at("pts_ms").get<double>() / 1000;
    for (const nlohmann::json& detection : event.at("detections")) {
      if (!detection.contains("track_id")) continue;
      Seen& s = seen[detection.at("track_id").get<int64_t>()];
      if (s.first_frame < 0) s.first_frame = frame, s.first_s = now_s, s.first_box = detection.at("box");
      s.last_frame = frame, s.last_s = now_s, s.last_box = detection.at("box");
      ++s.sightings;
      s.best_score = std::max(s.best_score, detection.at("score").get<double>());
      for (const nlohmann::json& zone : detection.value("zones", nlohmann::json::array())) s.zones.insert(zone);
    }
    for (const nlohmann::json& crossing : event.value("line_crossings", nlohmann::json::array())) {
      ++seen[crossing.at("track_id").get<int64_t>()].crossings;
    }
  }
  // Given up on the 16th processed frame (track-max-age 15) after its last, 3 decoded frames apart.
  const int64_t final_frame = run.events.back().at("frame").get<int64_t>();
  const int64_t give_up = 16 * 3;
  std::set<int64_t> reported;
  int lost = 0;
  for (const nlohmann::json& track : run.track_events) {
    const int64_t id = track.at("track_id").get<int64_t>();
    CAPTURE(id);
    CHECK(reported.insert(id).second);  // once per track
    REQUIRE(seen.count(id) == 1);
    const Seen& s = seen.at(id);
    CHECK(track.at("stream") == "street");
    CHECK(track.at("label") == "person");
    CHECK(track.at("first_frame") == s.first_frame);
    CHECK(track.at("last_frame") == s.last_frame);
    CHECK(track.at("sightings") == s.sightings);
    CHECK(std::abs(track.at("duration_s").get<double>() - (s.last_s - s.first_s)) <= 0.006);
    CHECK(std::abs(track.at("best").at("score").get<double>() - s.best_score) <= 1e-4);
    CHECK(track.at("first_box") == s.first_box);
    CHECK(track.at("last_box") == s.last_box);
    CHECK(std::set<std::string>(track.value("zones", std::set<std::string>{})) == s.zones);
    CHECK(track.value("line_crossings", int64_t{0}) == s.crossings);
    if (s.last_frame + give_up <= final_frame) {
      CHECK(track.at("end") == "lost");
      CHECK(track.at("after_frame") == s.last_frame + give_up);
      ++lost;
    } else {
      CHECK(track.at("end") == "stopped");
      CHECK(track.at("after_frame") == final_frame);
    }
  }
  CHECK(reported.size() == seen.size());
  MESSAGE(reported.size(), " track events: ", lost, " tracks lost in the clip, the rest still followed when it ended");
  CHECK(lost >= 10);
  CHECK(metric_value(run, R"(edgefuse_stream_track_events_total{stream="street"})") ==
        static_cast<double>(reported.size()));
}

TEST_CASE("motion-gate: a still picture runs the model once, the walking pedestrians on every due frame") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  const std::string gate = "    motion-gate: true\n    motion-refresh-s: 0\n";
  const DaemonRun still = run_daemon(model_yaml(model) +
                                         "streams:\n  - name: wall\n    uri: test://black\n    model: people\n"
                                         "    width: 320\n    height: 240\n    framerate: 30\n" +
                                         gate + kEventsYaml,
                                     2.0);
  REQUIRE(still.status.is_ok());
  const StreamReport& wall = still.report("wall");
  CHECK(wall.frames_in > 30);
  CHECK(wall.processed == 1);  // the first frame: nothing to compare it with
  CHECK(wall.still == wall.frames_in - 1);
  check_accounting(wall);
  CHECK(still.metrics.find("edgefuse_stream_still_frames_total{stream=\"wall\"} " + std::to_string(wall.still)) !=
        std::string::npos);

  const DaemonRun moving =
      run_daemon(model_yaml(model) + "streams:\n" + clip_stream_yaml("street", clip) + gate + kEventsYaml);
  REQUIRE(moving.status.is_ok());
  const StreamReport& street = moving.report("street");
  CHECK(street.still == 0);
  CHECK(street.processed == (kClipFrames + kInterval - 1) / kInterval);
  check_accounting(street);
}

TEST_CASE("snapshots: a JPEG of each frame where a tracked person appeared, named by its event") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  const std::filesystem::path folder = std::filesystem::temp_directory_path() / "edgefuse_daemon_snapshots";
  std::filesystem::remove_all(folder);
  const DaemonRun run = run_daemon(model_yaml(model) + "streams:\n" + clip_stream_yaml("street", clip) +
                                   "    classes: [person]\n    snapshots: " + folder.string() + "\n" + kEventsYaml);
  REQUIRE(run.status.is_ok());
  std::set<int64_t> seen;
  int snapshots = 0, dropped = 0;
  for (const nlohmann::json& event : run.events) {
    // A snapshot when a track id first appears (no zones or lines here), unless too many waited.
    const nlohmann::json* newcomer = nullptr;
    for (const nlohmann::json& detection : event.at("detections")) {
      if (detection.contains("track_id") && seen.insert(detection.at("track_id").get<int64_t>()).second) {
        newcomer = &detection;
      }
    }
    CAPTURE(event.at("frame"));
    REQUIRE((!event.contains("snapshot") || newcomer != nullptr));
    if (newcomer == nullptr) continue;
    if (!event.contains("snapshot")) {  // not taken: 4 were waiting to be written (a busy machine)
      ++dropped;
      continue;
    }
    ++snapshots;
    const std::filesystem::path path = event.at("snapshot").get<std::string>();
    CHECK(path == folder / "street" / (event.at("id").get<std::string>() + ".jpg"));
    const cv::Mat image = cv::imread(path.string(), cv::IMREAD_COLOR);
    REQUIRE(!image.empty());
    CHECK(image.cols == 1920);
    CHECK(image.rows == 1080);
    // The newcomer's box is drawn: its left edge, halfway down, is the person colour (pure green,
    // within JPEG's error) whatever the picture was.
    const nlohmann::json& box = newcomer->at("box");
    const int x = std::max(1, static_cast<int>(box[0].get<double>()) / 2 * 2 + 1);
    const int y = static_cast<int>((box[1].get<double>() + box[3].get<double>()) / 2);
    const cv::Vec3b edge = image.at<cv::Vec3b>(y, x);
    CHECK(edge[1] > 180);
    CHECK(edge[0] < 90);
    CHECK(edge[2] < 90);
  }
  MESSAGE(snapshots, " snapshots for ", seen.size(), " tracks, ", dropped, " not taken");
  CHECK(snapshots >= 3);
  CHECK(run.log.find("snapshots: " + std::to_string(snapshots) + " written, " + std::to_string(dropped) + " dropped") !=
        std::string::npos);
  std::filesystem::remove_all(folder);
}

TEST_CASE("class names the model does not know are errors naming the stream, zone or line") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  const std::string stream = "  - name: street\n    uri: " + clip.string() + "\n    model: people\n";
  const DaemonRun filter =
      run_daemon(model_yaml(model) + "streams:\n" + stream + "    classes: [pedestrian]\n" + kEventsYaml);
  CHECK(filter.status.message().find("stream 'street': class 'pedestrian' is not a label of model 'people' "
                                     "(labels: person, bicycle,") != std::string::npos);
  const DaemonRun zone = run_daemon(model_yaml(model) + "streams:\n" + stream +
                                    "    lines:\n      - name: door\n        points: [[0, 0.5], [1, 0.5]]\n"
                                    "        classes: [person, unicorn]\n" +
                                    kEventsYaml);
  CHECK_MESSAGE(zone.status.message().find("stream 'street': line 'door': class 'unicorn' is not a label of model "
                                           "'people'") != std::string::npos,
                zone.status.message());
}

TEST_CASE("the daemon's detections match edgefuse detect on the same decoded frames") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  const DaemonRun& run = single_stream_run(model, clip);
  REQUIRE(run.status.is_ok());
  const std::vector<int64_t> frames = {0, 400, 775};
  const std::map<int64_t, cv::Mat> images = decode_frames_bgr(clip, frames);
  REQUIRE(images.size() == frames.size());

  Result<std::shared_ptr<Graph>> graph = import_onnx_file(model.string());
  REQUIRE(graph.is_ok());
  REQUIRE(optimize_graph(**graph).is_ok());
  DetectorOptions options;
  options.max_detections = 100;  // the config's default
  Result<Detector> detector = Detector::create(*graph, DetectorFamily::kYolox, options);
  REQUIRE(detector.is_ok());

  // The daemon converts colour with the stream's matrix inside its fused resize; OpenCV converts
  // with BT.601 at full size first. Boxes that are clearly in (score >= 0.45) must be in both, in
  // the same place (IoU >= 0.8), with scores within 0.08.
  double worst_score_gap = 0;
  for (int64_t number : frames) {
    const nlohmann::json& event = run.events.at(static_cast<size_t>(number / kInterval));
    REQUIRE(event.at("frame") == number);
    Result<std::vector<Detection>> reference = detector->detect(images.at(number));
    REQUIRE(reference.is_ok());
    for (const Detection& expected : *reference) {
      if (expected.score < 0.45f) continue;
      bool found = false;
      for (const nlohmann::json& got : event.at("detections")) {
        if (got.at("class_id") != expected.class_id || iou(got.at("box"), expected.box) < 0.8f) continue;
        const double gap = std::abs(got.at("score").get<double>() - expected.score);
        worst_score_gap = std::max(worst_score_gap, gap);
        found = found || gap <= 0.08;
      }
      CHECK_MESSAGE(found, "frame " << number << ": reference detection class " << expected.class_id << " score "
                                    << expected.score << " not among the daemon's");
    }
    for (const nlohmann::json& got : event.at("detections")) {
      if (got.at("score").get<double>() < 0.45) continue;
      bool found = false;
      for (const Detection& expected : *reference) {
        found = found || (got.at("class_id") == expected.class_id && iou(got.at("box"), expected.box) >= 0.8f);
      }
      CHECK_MESSAGE(found, "frame " << number << ": daemon detection " << got.dump() << " not in the reference");
    }
  }
  MESSAGE("largest score difference daemon vs OpenCV-preprocessed reference: " << worst_score_gap);
}

TEST_CASE("a YOLOv8 model serves the clip as the YOLOX model does") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  // YOLOX-nano re-dressed as a YOLOv8 export (tests/models/yolo_redress.h): the daemon recognises the
  // family, feeds it RGB v / 255 letterboxed centred from the decoded frames, and decodes its
  // channel-major output. Every 100th frame, against the YOLOX run's events of the same frames.
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("edgefuse_yolov8_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  const std::filesystem::path yolov8 = folder / "yolov8.onnx";
  {
    const std::string bytes = redress_yolox_file(model, RedressAs::kYolov8);
    REQUIRE(!bytes.empty());
    std::ofstream(yolov8, std::ios::binary) << bytes;
  }
  constexpr int kEvery = 100;
  const DaemonRun run = run_daemon(model_yaml(yolov8) + "    labels: " + (model.parent_path() / "coco.names").string() +
                                   "\nstreams:\n" + clip_stream_yaml("street", clip, kEvery) + kEventsYaml);
  std::filesystem::remove_all(folder);
  REQUIRE(run.status.is_ok());
  CHECK(run.log.find("yolov8") != std::string::npos);
  const DaemonRun& yolox = single_stream_run(model, clip);
  REQUIRE(yolox.status.is_ok());
  REQUIRE(run.events.size() == static_cast<size_t>((kClipFrames + kEvery - 1) / kEvery));

  // The same network on the same frames, placed centred rather than at the top-left of its input:
  // the people clearly in (score >= 0.5) in either run must be in the other at nearly the same place
  // (measured: IoU 0.68 at worst, a pedestrian half hidden at the top right). Cars parked there are
  // cars to one run and trucks to the other, so only people count.
  constexpr int kPerson = 0;
  auto people = [](const nlohmann::json& event) {
    std::vector<Box> out;
    for (const nlohmann::json& d : event.at("detections")) {
      if (d.at("class_id") != kPerson || d.at("score").get<double>() < 0.5) continue;
      const nlohmann::json& b = d.at("box");
      out.push_back(Box{b[0].get<float>(), b[1].get<float>(), b[2].get<float>(), b[3].get<float>()});
    }
    return out;
  };
  auto best_iou = [](const nlohmann::json& event, const Box& box) {
    float best = 0;
    for (const nlohmann::json& d : event.at("detections")) {
      if (d.at("class_id") == kPerson) best = std::max(best, iou(d.at("box"), box));
    }
    return best;
  };
  float worst = 1;
  int confident = 0;
  for (const nlohmann::json& event : run.events) {
    const int64_t frame = event.at("frame").get<int64_t>();
    const nlohmann::json& reference = yolox.events.at(static_cast<size_t>(frame / kInterval));
    REQUIRE(reference.at("frame") == frame);
    for (const Box& box : people(event)) worst = std::min(worst, best_iou(reference, box));
    for (const Box& box : people(reference)) worst = std::min(worst, best_iou(event, box));
    confident += static_cast<int>(people(event).size());
  }
  MESSAGE("YOLOv8 vs YOLOX events: ", confident, " people, worst IoU ", worst);
  CHECK(confident >= static_cast<int>(run.events.size()));  // pedestrians on every frame
  CHECK(worst >= 0.6f);
}

// Two streams of the clip batched on one model; west drops what its mask and filters cover: the
// car and the truck parked at the top right, a faint "sports ball" on the plaza (a bag), and people
// too small or too wide to be someone standing. Run once for the tests that read it.
const DaemonRun& two_stream_run(const std::filesystem::path& model, const std::filesystem::path& clip) {
  static const DaemonRun run =
      run_daemon(model_yaml(model, 2) + "streams:\n" + clip_stream_yaml("east", clip) + clip_stream_yaml("west", clip) +
                 "    masks:\n"
                 "      - name: parking\n"
                 "        points: [[0.8, 0], [1, 0], [1, 0.3], [0.8, 0.3]]\n"
                 "        classes: [car, truck]\n"
                 "    filters:\n"
                 "      - classes: [sports ball, frisbee]\n"
                 "        min-score: 0.45\n"
                 "      - classes: [person]\n"
                 "        min-area: 0.002\n"
                 "        max-ratio: 0.6\n" +
                 kEventsYaml);
  return run;
}

TEST_CASE("two streams batched on one model give the same detections as one stream alone") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  const DaemonRun& single = single_stream_run(model, clip);
  REQUIRE(single.status.is_ok());
  const DaemonRun& run = two_stream_run(model, clip);
  REQUIRE(run.status.is_ok());
  // The fused model batches (its head's Transpose takes a batch): no fallback to one frame at a time.
  CHECK(run.log.find("max batch 2") != std::string::npos);
  CHECK(run.log.find("not possible") == std::string::npos);
  for (const std::string stream : {"east", "west"}) {
    const StreamReport& report = run.report(stream);
    check_accounting(report);
    CHECK(report.frames_in == kClipFrames);
    CHECK(report.dropped == 0);
  }
  const std::vector<nlohmann::json> events = run.events_of("east");
  REQUIRE(events.size() == single.events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    CHECK(events[i].at("frame") == single.events[i].at("frame"));
    CHECK(events[i].at("detections") == single.events[i].at("detections"));
  }
}

TEST_CASE("a stream's mask and object filters drop exactly the detections they cover, counted by reason") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  const DaemonRun& run = two_stream_run(model, clip);
  REQUIRE(run.status.is_ok());
  const std::vector<nlohmann::json> east = run.events_of("east"), west = run.events_of("west");
  REQUIRE(east.size() == west.size());

  // Why west should drop one of east's detections, recomputed from its box and score ("" to keep
  // it, "?" within rounding of a bound: the events round boxes to 0.01 px and scores to 1e-4).
  const auto verdict = [](const nlohmann::json& detection) -> std::string {
    const std::string label = detection.at("label").get<std::string>();
    const double score = detection.at("score").get<double>();
    const nlohmann::json& box = detection.at("box");
    const double x1 = box[0].get<double>(), y1 = box[1].get<double>(), x2 = box[2].get<double>(),
                 y2 = box[3].get<double>();
    const double area = (x2 - x1) * (y2 - y1) / (1920.0 * 1080.0), ratio = (x2 - x1) / (y2 - y1);
    const auto near = [](double value, double bound) { return std::abs(value - bound) <= 0.005 * bound; };
    if (label == "sports ball" || label == "frisbee") {
      if (std::abs(score - 0.45) <= 1e-4) return "?";
      if (score < 0.45) return "score";
    }
    if (label == "person") {
      if (near(area, 0.002) || near(ratio, 0.6)) return "?";
      if (area < 0.002) return "area";
      if (ratio > 0.6) return "ratio";
    }
    if (label == "car" || label == "truck") {
      const double x = (x1 + x2) / 2 / 1920, y = y2 / 1080;  // where it stands
      if (near(x, 0.8) || near(y, 0.3)) return "?";
      if (x > 0.8 && y < 0.3) return "mask";
    }
    return "";
  };
  // Each stream tracks what it keeps, so their track ids differ.
  const auto untracked = [](nlohmann::json detection) {
    detection.erase("track_id");
    return detection;
  };
  std::map<std::string, int> dropped;
  int kept = 0, borderline = 0;
  for (size_t i = 0; i < east.size(); ++i) {
    CHECK(east[i].at("frame") == west[i].at("frame"));
    const nlohmann::json& remaining = west[i].at("detections");
    size_t next = 0;  // west's detections are east's in the same order, fewer
    for (const nlohmann::json& detection : east[i].at("detections")) {
      const bool in_west = next < remaining.size() && untracked(remaining[next]) == untracked(detection);
      next += in_west ? 1 : 0;
      const std::string why = verdict(detection);
      if (why == "?") {
        ++borderline;
        continue;
      }
      CHECK_MESSAGE(in_west == why.empty(), "frame " << east[i].at("frame") << ": " << detection.dump());
      why.empty() ? ++kept : ++dropped[why];
    }
    CHECK(next == remaining.size());  // and nothing east did not find
  }
  MESSAGE(kept, " kept, dropped: ", dropped["score"], " by score, ", dropped["area"], " by area, ", dropped["ratio"],
          " by shape, ", dropped["mask"], " by the mask; ", borderline, " within rounding of a bound");
  // Each bound drops something on this clip, and most people stay.
  for (const std::string reason : {"score", "area", "ratio", "mask"}) {
    CAPTURE(reason);
    CHECK(dropped[reason] >= 5);
    const std::string labels = R"({stream="west",reason=")" + reason + "\"}";
    const double counted = metric_value(run, "edgefuse_stream_detections_dropped_total" + labels);
    CHECK(counted >= dropped[reason]);
    CHECK(counted <= dropped[reason] + borderline);
    const nlohmann::json& west_listed = run.streams.at("streams").at(1);
    REQUIRE(west_listed.at("name") == "west");
    CHECK(west_listed.at("detections_dropped").at(reason) == counted);  // /streams agrees with /metrics
    CHECK(metric_value(run, R"(edgefuse_stream_detections_dropped_total{stream="east",reason=")" + reason + "\"}") ==
          0);
  }
  CHECK(kept >= 100);
  CHECK(run.log.find("stream 'west' summary") != std::string::npos);
  CHECK(run.log.find("detections masked or filtered ") != std::string::npos);
}

TEST_CASE("a stream whose resolution changes goes on: events, zones, motion gate and recording at the new size") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("edgefuse_sizes_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  // 3 s of the clip at 640 x 360, then the same 3 s at 960 x 540 (a camera switching profiles).
  const std::filesystem::path source = folder / "sizes.ts";
  write_clip_in_sizes(clip, source, 90, {{640, 360}, {960, 540}});
  const DaemonRun run = run_daemon(
      model_yaml(model) + "streams:\n  - name: camera\n    uri: " + source.string() +
      "\n    model: people\n    realtime: false\n    inference-interval: 5\n"
      "    queue-size: 64\n    motion-gate: true\n    overlay-file: " +
      (folder / "camera.mp4").string() +
      "\n    zones:\n      - name: left\n        points: [[0, 0], [0.5, 0], [0.5, 1], [0, 1]]\n" + kEventsYaml);
  REQUIRE(run.status.is_ok());
  const StreamReport& report = run.report("camera");
  CHECK(report.error.empty());
  CHECK(report.reconnects == 0);  // the same pipeline carries on: no failure, no rebuild
  CHECK(report.failed == 0);
  CHECK(report.dropped == 0);
  check_accounting(report);
  CHECK(report.frames_in >= 180);

  // Each frame's event has its own size; detections stay inside it, zones follow it, and the
  // pedestrians are found at both sizes.
  std::map<int, int> frames_at, with_people_at;  // by width
  int previous_width = 0, size_changes = 0;
  for (const nlohmann::json& event : run.events) {
    const int width = event.at("width").get<int>(), height = event.at("height").get<int>();
    CAPTURE(event.at("frame"));
    CHECK(((width == 640 && height == 360) || (width == 960 && height == 540)));
    size_changes += previous_width != 0 && width != previous_width ? 1 : 0;
    previous_width = width;
    ++frames_at[width];
    int people = 0, left = 0;
    for (const nlohmann::json& detection : event.at("detections")) {
      const nlohmann::json& box = detection.at("box");
      CHECK(box[0].get<double>() >= -0.01);
      CHECK(box[1].get<double>() >= -0.01);
      CHECK(box[2].get<double>() <= width + 0.01);
      CHECK(box[3].get<double>() <= height + 0.01);
      people += detection.at("label") == "person" && detection.at("score").get<double>() > 0.5 ? 1 : 0;
      left += (box[0].get<double>() + box[2].get<double>()) / 2 < width / 2.0 ? 1 : 0;
    }
    with_people_at[width] += people >= 2 ? 1 : 0;
    CHECK(event.at("zone_counts").at("left") == left);
  }
  CHECK(size_changes == 1);
  for (const int width : {640, 960}) {
    CAPTURE(width);
    CHECK(frames_at[width] >= 15);
    CHECK(with_people_at[width] >= frames_at[width] - 1);
  }
  // The recording went on in a second file at the new size.
  CHECK(run.log.find("in 2 files (the frame size changed)") != std::string::npos);
  for (const auto& [name, width] : {std::pair{"camera.mp4", 640}, std::pair{"camera.1.mp4", 960}}) {
    CAPTURE(name);
    const std::map<int64_t, cv::Mat> first = decode_frames_bgr(folder / name, {0});
    REQUIRE(first.count(0) == 1);
    CHECK(first.at(0).cols == width);
  }
  std::filesystem::remove_all(folder);
}

TEST_CASE("broken streams are logged and end while a good stream runs to completion") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::filesystem::path truncated = dir / "edgefuse_truncated.mp4";
  const std::filesystem::path garbage = dir / "edgefuse_garbage.mp4";
  {
    std::ifstream in(clip, std::ios::binary);
    std::vector<char> bytes(std::filesystem::file_size(clip) / 3);
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::ofstream(truncated, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    // The same start, then bytes overwritten in the middle of the video data.
    for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 200000; ++i) bytes[i] = static_cast<char>(i * 131);
    std::ofstream(garbage, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  const DaemonRun run = run_daemon(
      model_yaml(model) + "streams:\n" + clip_stream_yaml("good", clip) + clip_stream_yaml("truncated", truncated) +
      clip_stream_yaml("corrupt", garbage) +
      "  - name: offline\n    uri: rtsp://127.0.0.1:9/none\n    model: people\n    reconnect: false\n" + kEventsYaml);
  std::filesystem::remove(truncated);
  std::filesystem::remove(garbage);
  REQUIRE(run.status.is_ok());
  const StreamReport& good = run.report("good");
  CHECK(good.error.empty());
  CHECK(good.frames_in == kClipFrames);
  CHECK(good.processed == (kClipFrames + kInterval - 1) / kInterval);
  CHECK(run.events_of("good").size() == static_cast<size_t>(good.processed));
  CHECK(!run.report("offline").error.empty());
  for (const std::string stream : {"truncated", "corrupt"}) {
    const StreamReport& report = run.report(stream);
    check_accounting(report);
    CHECK(report.frames_in < kClipFrames);  // ended early, with or without an error message
    CHECK(run.events_of(stream).size() == static_cast<size_t>(report.events));
  }
}

TEST_CASE("the daemon consumes an RTSP stream from a loopback server") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  RtspServer server(clip);
  REQUIRE(!server.url().empty());
  for (const std::string transport : {"tcp", "udp"}) {
    CAPTURE(transport);
    const DaemonRun run = run_daemon(model_yaml(model) + "streams:\n  - name: camera\n    uri: " + server.url() +
                                         "\n    model: people\n    rtsp-transport: " + transport + "\n" + kEventsYaml,
                                     5.0);
    REQUIRE(run.status.is_ok());
    const StreamReport& report = run.report("camera");
    CHECK(report.error.empty());
    check_accounting(report);
    CHECK(report.frames_in >= 30);  // ~4 s of 30 fps video after connecting
    CHECK(report.processed >= 2);   // inference is ~0.6 s a frame under sanitizers
    const std::vector<nlohmann::json> events = run.events_of("camera");
    REQUIRE(events.size() == static_cast<size_t>(report.processed));
    int people = 0;
    for (const nlohmann::json& event : events) {
      CHECK(event.at("width") == 1920);
      for (const nlohmann::json& detection : event.at("detections")) people += detection.at("label") == "person";
    }
    CHECK(people >= static_cast<int>(events.size()));
  }
}

}  // namespace
}  // namespace edgefuse::test
