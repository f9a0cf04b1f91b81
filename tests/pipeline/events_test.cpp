#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/daemon/detection_event.h"
#include "pipeline/daemon/event_sink.h"
#include "pipeline/daemon/stream_stats.h"

namespace edgefuse {
namespace {

TEST_CASE("state_event_to_json writes the documented schema") {
  StateEvent event;
  event.id = "0123456789abcdef-7";
  event.stream = "door";
  event.state = "backoff";
  event.previous = "streaming";
  event.reason = "rtspsrc: Could not read from resource.";
  event.retry_in_s = 1.234;
  event.reconnects = 3;
  event.wall_time_ns = 1'796'223'845'123'456'789;
  CHECK(state_event_to_json(event) ==
        "{\"type\":\"state\",\"id\":\"0123456789abcdef-7\",\"stream\":\"door\",\"state\":\"backoff\","
        "\"previous\":\"streaming\",\"reason\":\"rtspsrc: Could not read from resource.\",\"retry_in_s\":1.23,"
        "\"reconnects\":3,\"wall_time\":\"2026-12-02T15:04:05.123Z\"}");
  event.state = "streaming";  // retry_in_s only belongs to backoff
  CHECK(state_event_to_json(event).find("retry_in_s") == std::string::npos);
}

TEST_CASE("track_event_to_json writes the documented schema") {
  TrackEvent event;
  event.id = "0123456789abcdef-9";
  event.stream = "door";
  event.model = "people";
  event.zone_names = {"porch", "drive", "gate"};
  event.wall_time_ns = 1'796'223'845'123'456'789;
  TrackRecord& r = event.record;
  r.track_id = 12;
  r.class_id = 0;
  r.first_frame = 30;
  r.last_frame = 93;
  r.first_pts_ns = 1'000'000'000;
  r.last_pts_ns = 3'100'000'000;
  r.first_s = 4.0;
  r.last_s = 6.1;
  r.sightings = 20;
  r.first_box = {1, 2, 3, 4};
  r.last_box = {5, 6, 7, 8};
  r.best_box = {9, 10, 11, 12.5f};
  r.best_score = 0.87654f;
  r.best_frame = 60;
  r.zone_mask = 0b101;
  r.crossings = 2;
  r.snapshot = "/shots/door/x.jpg";
  CHECK(track_event_to_json(event, {"person"}) ==
        "{\"type\":\"track\",\"id\":\"0123456789abcdef-9\",\"stream\":\"door\",\"model\":\"people\","
        "\"track_id\":12,\"label\":\"person\",\"class_id\":0,\"end\":\"lost\",\"first_frame\":30,\"last_frame\":93,"
        "\"first_pts_ms\":1000.000,\"last_pts_ms\":3100.000,\"duration_s\":2.10,\"sightings\":20,"
        "\"first_box\":[1.00,2.00,3.00,4.00],\"last_box\":[5.00,6.00,7.00,8.00],"
        "\"best\":{\"score\":0.8765,\"frame\":60,\"box\":[9.00,10.00,11.00,12.50]},\"zones\":[\"porch\",\"gate\"],"
        "\"line_crossings\":2,\"snapshot\":\"/shots/door/x.jpg\",\"wall_time\":\"2026-12-02T15:04:05.123Z\"}");
  // Still followed when its stream stopped; no timestamps, zones, crossings or snapshot.
  r.stopped = true;
  r.first_pts_ns = r.last_pts_ns = -1;
  r.zone_mask = 0;
  r.crossings = 0;
  r.snapshot.clear();
  const std::string plain = track_event_to_json(event, {"person"});
  CHECK(plain.find("\"end\":\"stopped\"") != std::string::npos);
  CHECK(plain.find("\"first_pts_ms\":null,\"last_pts_ms\":null") != std::string::npos);
  for (const char* absent : {"zones", "line_crossings", "snapshot"}) CHECK(plain.find(absent) == std::string::npos);
}

TEST_CASE("format_utc_iso8601 gives UTC with milliseconds") {
  CHECK(format_utc_iso8601(0) == "1970-01-01T00:00:00.000Z");
  CHECK(format_utc_iso8601(1'796'223'845'123'456'789) == "2026-12-02T15:04:05.123Z");
}

TEST_CASE("event_to_json writes the documented schema") {
  DetectionEvent event;
  event.id = "0123456789abcdef-42";
  event.stream = "door";
  event.model = "people";
  event.frame = 42;
  event.pts_ns = 1'400'000'000;
  event.wall_time_ns = 1'796'223'845'123'456'789;
  event.latency_ms = 12.345;
  event.width = 1920;
  event.height = 1080;
  Detection person;
  person.box = {10.5f, 20.25f, 110.f, 220.f};
  person.score = 0.87654f;
  person.class_id = 0;
  event.detections.push_back(person);
  Detection unknown = person;
  unknown.class_id = 7;
  unknown.track_id = 12;  // a confirmed track; the person's is not (-1: no key)
  event.detections.push_back(unknown);
  const std::string json = event_to_json(event, {"person"});
  CHECK(
      json ==
      "{\"type\":\"detections\",\"id\":\"0123456789abcdef-42\",\"stream\":\"door\",\"frame\":42,\"pts_ms\":1400.000,"
      "\"wall_time\":\"2026-12-02T15:04:05.123Z\","
      "\"latency_ms\":12.35,\"model\":\"people\",\"width\":1920,\"height\":1080,\"detections\":["
      "{\"label\":\"person\",\"class_id\":0,\"score\":0.8765,\"box\":[10.50,20.25,110.00,220.00]},"
      "{\"label\":\"class_7\",\"class_id\":7,\"track_id\":12,\"score\":0.8765,\"box\":[10.50,20.25,110.00,220.00]}]}");
  event.pts_ns = -1;
  event.detections.clear();
  CHECK(event_to_json(event, {}).find("\"pts_ms\":null") != std::string::npos);
}

TEST_CASE("event_to_json with zones: each detection's zones, the counts, enter/leave/loiter and crossings") {
  ZoneMonitor zones({{"left", {{0, 0}, {0.5, 0}, {0.5, 1}, {0, 1}}, {}},
                     {"all", {{0, 0}, {1, 0}, {1, 1}, {0, 1}}, {}, /*loiter_s=*/1.0}},
                    {{"door", {0.5, 0}, {0.5, 1}, {}}}, 5);
  DetectionEvent event;
  event.id = "r-1";
  event.stream = "hall";
  event.model = "people";
  event.width = 100;
  event.height = 100;
  event.zones = &zones;
  Detection walker;
  walker.box = {60, 10, 80, 90};  // stands at (0.7, 0.9): right of the door
  walker.score = 0.5f;
  walker.track_id = 3;
  std::vector<Detection> frame = {walker};
  event.zone_activity = zones.update(frame, 100, 100, 0.0);
  frame[0].box = {20, 10, 40, 90};  // now at (0.3, 0.9): through the door, leftwards
  event.zone_activity = zones.update(frame, 100, 100, 0.5);
  event.detections = frame;
  const std::string json = event_to_json(event, {"person"});
  CHECK_MESSAGE(
      json.find("\"detections\":[{\"label\":\"person\",\"class_id\":0,\"track_id\":3,\"score\":0.5000,"
                "\"box\":[20.00,10.00,40.00,90.00],\"zones\":[\"left\",\"all\"]}],"
                "\"zone_counts\":{\"left\":1,\"all\":1},"
                "\"zone_class_counts\":{\"left\":{\"person\":1},\"all\":{\"person\":1}},"
                "\"zone_events\":[{\"zone\":\"left\",\"event\":\"enter\",\"track_id\":3,\"label\":\"person\"}],"
                "\"line_crossings\":[{\"line\":\"door\",\"direction\":\"forward\",\"track_id\":3,"
                "\"label\":\"person\"}]}") != std::string::npos,
      json);
  // A quiet frame: counts only, no empty lists.
  event.zone_activity = zones.update(frame, 100, 100, 0.8);
  const std::string quiet = event_to_json(event, {"person"});
  CHECK(quiet.find("\"zone_counts\":{\"left\":1,\"all\":1},"
                   "\"zone_class_counts\":{\"left\":{\"person\":1},\"all\":{\"person\":1}}}") != std::string::npos);
  CHECK(quiet.find("zone_events") == std::string::npos);
  CHECK(quiet.find("line_crossings") == std::string::npos);
  // In "all" since 0 s: at 1.25 s it has loitered; back to the right at 2 s, it leaves "left".
  event.zone_activity = zones.update(frame, 100, 100, 1.25);
  CHECK_MESSAGE(event_to_json(event, {"person"})
                        .find("\"zone_events\":[{\"zone\":\"all\",\"event\":\"loiter\",\"track_id\":3,"
                              "\"label\":\"person\",\"dwell_s\":1.25}]") != std::string::npos,
                event_to_json(event, {"person"}));
  frame[0].box = {60, 10, 80, 90};
  event.zone_activity = zones.update(frame, 100, 100, 2.0);
  event.detections = frame;
  CHECK_MESSAGE(event_to_json(event, {"person"})
                        .find("\"zone_events\":[{\"zone\":\"left\",\"event\":\"leave\",\"track_id\":3,"
                              "\"label\":\"person\",\"dwell_s\":1.50}]") != std::string::npos,
                event_to_json(event, {"person"}));
}

TEST_CASE("JsonLinesSink appends whole lines from many threads, none lost") {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "edgefuse_events_test.jsonl";
  std::filesystem::remove(path);
  {
    Result<std::unique_ptr<JsonLinesSink>> sink = JsonLinesSink::open(path.string());
    REQUIRE(sink.is_ok());
    std::vector<std::thread> writers;
    for (int t = 0; t < 4; ++t) {
      writers.emplace_back([&, t] {
        for (int i = 0; i < 250; ++i) CHECK((*sink)->write("{\"t\":" + std::to_string(t) + "}").is_ok());
      });
    }
    for (std::thread& writer : writers) writer.join();
    CHECK((*sink)->lines_written() == 1000);
  }
  std::ifstream in(path);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    CHECK(line.size() == 7);
    ++lines;
  }
  CHECK(lines == 1000);
  std::filesystem::remove(path);
}

TEST_CASE("JsonLinesSink names a file it cannot open") {
  Result<std::unique_ptr<JsonLinesSink>> sink = JsonLinesSink::open("/nonexistent-dir/events.jsonl");
  REQUIRE(!sink.is_ok());
  CHECK(sink.status().message().find("/nonexistent-dir/events.jsonl") != std::string::npos);
}

TEST_CASE("latency summary uses nearest-rank percentiles") {
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);
  const LatencySummary summary = summarize_latencies_ms(samples);
  CHECK(summary.count == 100);
  CHECK(summary.p50_ms == 50);
  CHECK(summary.p99_ms == 99);
  CHECK(summary.max_ms == 100);
  std::vector<double> none;
  CHECK(summarize_latencies_ms(none).count == 0);

  StreamStats stats;
  stats.add_latency_ms(5);
  stats.add_latency_ms(7);
  CHECK(stats.take_window().count == 2);
  CHECK(stats.take_window().count == 0);  // the window restarts
  CHECK(stats.total().count == 2);
}

}  // namespace
}  // namespace edgefuse
