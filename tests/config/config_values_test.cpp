// Valid configs parse to exactly the values written, with defaults for keys left out.
#include <doctest/doctest.h>

#include "pipeline/config/config.h"
#include "tests/config/config_test_folder.h"

using namespace edgefuse;
using edgefuse::test::ConfigFolder;

namespace {

constexpr std::string_view kFullConfig = R"(# every key, none at its default
models:
  - name: det
    path: model.onnx
    family: yolox
    labels: coco.names
    device: cuda
    precision: fp16
    threads: 4
    score-threshold: 0.5
    iou-threshold: 6e-1
    max-detections: 50
    max-batch: 4
    batch-timeout-ms: 20
    fuse: false
  - name: faces
    path: sub/../sub/faces.onnx
    family: blazeface
streams:
  - name: street.cam-1
    uri: street.mp4
    model: det
    classes: [person, "traffic light"]
    inference-interval: 3
    loop: true
    realtime: false
    queue-size: 8
    decoder: avdec_h264
    track: false
    track-iou: 0.25
    track-max-age: 40
    track-min-hits: 3
    motion-gate: true
    motion-area-percent: 0.5
    motion-block-delta: 20
    motion-refresh-s: 0
    zones:
      - name: crossing
        points: [[0, 0.5], [1, 0.5], [1.0, 1], [0, 1]]
        classes: [person]
      - name: kerb
        points: [[0.1, 0.2], [0.3, 0.2], [0.2, 0.4]]
  - name: door
    uri: rtsp://127.0.0.1:8554/door
    model: faces
    rtsp-transport: udp
    lines:
      - name: threshold
        points: [[0.25, 0.9], [0.75, 0.9]]
    zones:
      - name: porch
        points: [[0, 0.6], [1, 0.6], [0.5, 1]]
        loiter-s: 45.5
    masks:
      - name: hedge
        points: [[0, 0], [0.2, 0], [0.2, 0.3]]
        classes: [person]
    filters:
      - classes: [person, cat]
        min-score: 0.6
        min-area: 0.001
        max-area: 0.5
        min-ratio: 0.2
        max-ratio: 1.5
      - max-area: 0.9
  - name: synthetic
    uri: test://ball
    model: det
    width: 640
    height: 480
    framerate: 15
    snapshots: shots
    snapshots-max-mb: 64
  - name: usb
    uri: v4l2:///dev/video0
    model: det
events:
  path: out/events.jsonl
  empty-frames: true
  tracks: true
stats-interval-s: 2.5
)";

}  // namespace

TEST_CASE("a config with every key parses to exactly the values written") {
  const ConfigFolder folder;
  const Result<DaemonConfig> parsed = folder.parse(kFullConfig);
  REQUIRE_MESSAGE(parsed.is_ok(), parsed.status().message());
  const DaemonConfig& config = *parsed;

  REQUIRE(config.models.size() == 2);
  const ModelConfig& det = config.models[0];
  CHECK(det.name == "det");
  CHECK(det.path == folder.path() / "model.onnx");
  CHECK(det.family == "yolox");
  CHECK(det.labels == folder.path() / "coco.names");
  CHECK(det.device == "cuda");
  CHECK(det.precision == "fp16");
  CHECK(config.models[1].precision == "fp32");  // the default
  CHECK(det.threads == 4);
  CHECK(det.score_threshold == 0.5);
  CHECK(det.iou_threshold == 0.6);
  CHECK(det.max_detections == 50);
  CHECK(det.max_batch == 4);
  CHECK(det.batch_timeout_ms == 20);
  CHECK_FALSE(det.fuse);
  CHECK(config.models[1].path == folder.path() / "sub/faces.onnx");  // normalised
  CHECK(config.models[1].family == "blazeface");

  REQUIRE(config.streams.size() == 4);
  const StreamConfig& street = config.streams[0];
  CHECK(street.name == "street.cam-1");
  CHECK(street.uri == "file://" + (folder.path() / "street.mp4").string());
  CHECK(street.model == "det");
  CHECK(street.classes == std::vector<std::string>{"person", "traffic light"});
  CHECK(street.inference_interval == 3);
  CHECK(street.loop);
  CHECK_FALSE(street.realtime);
  CHECK(street.queue_size == 8);
  CHECK(street.decoder == "avdec_h264");
  CHECK_FALSE(street.track);
  CHECK(street.track_iou == 0.25);
  CHECK(street.track_max_age == 40);
  CHECK(street.track_min_hits == 3);
  CHECK(street.motion_gate);
  CHECK(street.motion_area_percent == 0.5);
  CHECK(street.motion_block_delta == 20);
  CHECK(street.motion_refresh_s == 0);
  REQUIRE(street.zones.size() == 2);
  CHECK(street.zones[0].name == "crossing");
  CHECK(street.zones[0].points == std::vector<Point>{{0, 0.5}, {1, 0.5}, {1, 1}, {0, 1}});
  CHECK(street.zones[0].classes == std::vector<std::string>{"person"});
  CHECK(street.zones[1].points.size() == 3);
  CHECK(street.zones[1].classes.empty());
  CHECK(street.lines.empty());
  REQUIRE(config.streams[1].lines.size() == 1);
  CHECK(config.streams[1].lines[0].name == "threshold");
  CHECK(config.streams[1].lines[0].points == std::vector<Point>{{0.25, 0.9}, {0.75, 0.9}});
  REQUIRE(config.streams[1].zones.size() == 1);
  CHECK(config.streams[1].zones[0].loiter_s == 45.5);
  CHECK(street.zones[0].loiter_s == 0);
  CHECK(street.masks.empty());
  CHECK(street.filters.empty());
  const StreamConfig& door = config.streams[1];
  REQUIRE(door.masks.size() == 1);
  CHECK(door.masks[0].name == "hedge");
  CHECK(door.masks[0].points == std::vector<Point>{{0, 0}, {0.2, 0}, {0.2, 0.3}});
  CHECK(door.masks[0].classes == std::vector<std::string>{"person"});
  REQUIRE(door.filters.size() == 2);
  CHECK(door.filters[0] == ObjectFilterConfig{.classes = {"person", "cat"},
                                              .min_score = 0.6,
                                              .min_area = 0.001,
                                              .max_area = 0.5,
                                              .min_ratio = 0.2,
                                              .max_ratio = 1.5});
  CHECK(door.filters[1] == ObjectFilterConfig{.max_area = 0.9});  // the rest as if absent
  CHECK(config.streams[1].uri == "rtsp://127.0.0.1:8554/door");
  CHECK(config.streams[1].rtsp_transport == "udp");
  CHECK(config.streams[2].uri == "test://ball");
  CHECK(config.streams[2].width == 640);
  CHECK(config.streams[2].height == 480);
  CHECK(config.streams[2].framerate == 15);
  CHECK(config.streams[2].snapshots == (folder.path() / "shots").string());
  CHECK(config.streams[2].snapshots_max_mb == 64);
  CHECK(config.streams[3].uri == "v4l2:///dev/video0");

  CHECK(config.events.path == (folder.path() / "out/events.jsonl").string());
  CHECK(config.events.empty_frames);
  CHECK(config.events.tracks);
  CHECK(config.stats_interval_s == 2.5);
  CHECK(config.source.empty());
}

TEST_CASE("keys left out take the documented defaults") {
  const ConfigFolder folder;
  const Result<DaemonConfig> parsed = folder.parse(R"(models:
  - {name: det, path: model.onnx}
streams:
  - {name: cam, uri: test://, model: det}
)");
  REQUIRE_MESSAGE(parsed.is_ok(), parsed.status().message());
  const ModelConfig& model = parsed->models.at(0);
  CHECK(model.family == "auto");
  CHECK(model.labels.empty());
  CHECK(model.device == "cpu");
  CHECK(model.threads == 0);
  CHECK(model.score_threshold == 0.3);
  CHECK(model.iou_threshold == 0.45);
  CHECK(model.max_detections == 100);
  CHECK(model.max_batch == 1);
  CHECK(model.batch_timeout_ms == 5);
  CHECK(model.fuse);
  const StreamConfig& stream = parsed->streams.at(0);
  CHECK(stream.uri == "test://");
  CHECK(stream.classes.empty());
  CHECK(stream.inference_interval == 1);
  CHECK_FALSE(stream.loop);
  CHECK(stream.realtime);
  CHECK(stream.queue_size == 2);
  CHECK(stream.rtsp_transport == "tcp");
  CHECK(stream.decoder == "auto");
  CHECK(stream.width == 0);
  CHECK(stream.height == 0);
  CHECK(stream.framerate == 30);
  CHECK(stream.track);
  CHECK(stream.track_iou == 0.3);
  CHECK(stream.track_max_age == 15);
  CHECK(stream.track_min_hits == 2);
  CHECK_FALSE(stream.motion_gate);
  CHECK(stream.motion_area_percent == 0.1);
  CHECK(stream.motion_block_delta == 12);
  CHECK(stream.motion_refresh_s == 10);
  CHECK(stream.zones.empty());
  CHECK(stream.lines.empty());
  CHECK(stream.snapshots.empty());
  CHECK(stream.snapshots_max_mb == 256);
  CHECK(parsed->events.path == "-");
  CHECK_FALSE(parsed->events.empty_frames);
  CHECK_FALSE(parsed->events.tracks);
  CHECK(parsed->stats_interval_s == 10);
}

TEST_CASE("scalars resolve by the YAML 1.2 core schema") {
  const ConfigFolder folder;
  const Result<DaemonConfig> parsed = folder.parse(R"(models:
  - name: "42"           # quoted: a string, though it reads as a number
    path: 'model.onnx'
    threads: +8
    score-threshold: 1
    iou-threshold: .25
    fuse: False
streams:
  - {name: "007", uri: "test://smpte", model: "42", width: 0, height: 16}
stats-interval-s: 0
)");
  REQUIRE_MESSAGE(parsed.is_ok(), parsed.status().message());
  CHECK(parsed->models[0].name == "42");
  CHECK(parsed->models[0].threads == 8);
  CHECK(parsed->models[0].score_threshold == 1.0);
  CHECK(parsed->models[0].iou_threshold == 0.25);
  CHECK_FALSE(parsed->models[0].fuse);
  CHECK(parsed->streams[0].name == "007");
  CHECK(parsed->stats_interval_s == 0);
}

TEST_CASE("load_config_file resolves paths against the file's folder and records the source") {
  const ConfigFolder folder;
  const std::filesystem::path file = folder.write("sub/cameras.yaml", R"(models:
  - {name: det, path: ../model.onnx}
streams:
  - {name: cam, uri: ../street.mp4, model: det, loop: true}
events: {path: events.jsonl}
)");
  const Result<DaemonConfig> loaded = load_config_file(file);
  REQUIRE_MESSAGE(loaded.is_ok(), loaded.status().message());
  CHECK(loaded->source == file);
  CHECK(loaded->models[0].path == folder.path() / "model.onnx");
  CHECK(loaded->streams[0].uri == "file://" + (folder.path() / "street.mp4").string());
  CHECK(loaded->events.path == (folder.path() / "sub/events.jsonl").string());
}
