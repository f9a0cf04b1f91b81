// Every class of mistake gives a message naming the key path, the line, what was expected and what
// was found.
#include <doctest/doctest.h>

#include <string>

#include "pipeline/config/config.h"
#include "tests/config/config_test_folder.h"

using namespace edgefuse;
using edgefuse::test::ConfigFolder;

namespace {

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// Lines 1-7; tests append keys to the stream (at 2-space indent +2) from line 8 on.
constexpr std::string_view kValid = R"(models:
  - name: det
    path: model.onnx
streams:
  - name: cam
    uri: street.mp4
    model: det
)";

std::string with_stream_key(std::string_view line) {
  return std::string(kValid) + "    " + std::string(line) + "\n";
}

}  // namespace

TEST_CASE("type errors name the key path, expectation, value and line") {
  const ConfigFolder folder;
  const std::string message = folder.error(R"(models:
  - name: det
    path: model.onnx
streams:
  - name: a
    uri: test://
    model: det
  - name: b
    uri: test://
    model: det
    inference-interval: two
)");
  CHECK_MESSAGE(
      contains(message,
               R"(test.yaml: streams[1].inference-interval: expected integer in 1..1000, got "two" (line 11))"),
      message);

  CHECK(contains(folder.error(with_stream_key("queue-size: 2.5")),
                 R"(streams[0].queue-size: expected integer in 1..64, got "2.5" (line 8))"));
  CHECK(contains(folder.error(with_stream_key("queue-size: 65")), "expected integer in 1..64, got \"65\""));
  CHECK(contains(folder.error(with_stream_key("motion-area-percent: 0")),
                 R"(streams[0].motion-area-percent: expected number in 0.001..100, got "0" (line 8))"));
  CHECK(contains(folder.error(with_stream_key("queue-size: 99999999999999999999")), "expected integer in 1..64"));
  CHECK(contains(folder.error(with_stream_key("queue-size: \"4\"")), "got quoted \"4\""));
  CHECK(contains(folder.error(with_stream_key("queue-size:")), "expected integer in 1..64, got null (line"));
  CHECK(contains(folder.error(with_stream_key("loop: yes")),
                 R"(streams[0].loop: expected true or false, got "yes" (line 8))"));
  CHECK(contains(folder.error(with_stream_key("classes: person")), "streams[0].classes: expected list of strings"));
  CHECK(contains(folder.error(with_stream_key("classes: [person, [car]]")),
                 "streams[0].classes[1]: expected a non-empty string, got a list"));
  CHECK(contains(folder.error(with_stream_key("rtsp-transport: http")), "expected one of tcp, udp, got \"http\""));
  CHECK(
      contains(folder.error(with_stream_key("track-iou: 1.5")), "streams[0].track-iou: expected number in 0.05..0.95"));
  CHECK(contains(folder.error(with_stream_key("track-max-age: 0")), "expected integer in 1..300, got \"0\""));
  CHECK(contains(folder.error(with_stream_key("width: 8")), "expected integer in 16..7680 or 0, got \"8\""));
  CHECK(contains(folder.error(with_stream_key("decoder: \"avdec h264\"")),
                 "streams[0].decoder: expected name of letters"));
  CHECK(contains(folder.error(std::string(kValid) + "stats-interval-s: .inf\n"),
                 R"(stats-interval-s: expected number in 0..3600, got ".inf" (line 8))"));
  CHECK(contains(folder.error(std::string(kValid) + "stats-interval-s: 1e999\n"), "expected number in 0..3600"));
  CHECK(
      contains(folder.error(std::string(kValid) + "stats-interval-s: -1\n"), "expected number in 0..3600, got \"-1\""));
}

TEST_CASE("unknown keys are errors with the closest known key suggested") {
  const ConfigFolder folder;
  const std::string message = folder.error(R"(models:
  - name: det
    path: model.onnx
    score_threshold: 0.5
    scor-threshold: 0.5
    colour: red
streams:
  - {name: cam, uri: test://, model: det}
evnts: {}
)");
  CHECK_MESSAGE(
      contains(message, R"(models[0].score_threshold: unknown key (line 4); did you mean "score-threshold"?)"),
      message);
  CHECK(contains(message, R"(models[0].scor-threshold: unknown key (line 5); did you mean "score-threshold"?)"));
  CHECK(contains(message, "models[0].colour: unknown key (line 6)\n"));  // nothing close: no suggestion
  CHECK(message.starts_with("test.yaml: models[0].score_threshold"));    // problems are listed by line
  CHECK(contains(message, R"(evnts: unknown key (line 9); did you mean "events"?)"));
}

TEST_CASE("missing and empty sections and required keys") {
  const ConfigFolder folder;
  CHECK(contains(folder.error("models: []\nstreams: []\n"),
                 "models: expected a non-empty list of mappings, got a list (line 1)"));
  CHECK(contains(folder.error("streams:\n  - {name: cam, uri: test://, model: det}\n"),
                 R"(missing required key "models" (line 1))"));
  CHECK(contains(folder.error("models: {name: det}\nstreams: [x]\n"),
                 "models: expected a non-empty list of mappings, got a mapping"));
  CHECK(contains(folder.error("models:\n  - det\nstreams:\n  - {name: cam, uri: test://, model: det}\n"),
                 R"(models[0]: expected a mapping of keys, got "det" (line 2))"));
  const std::string message =
      folder.error("models:\n  - {name: det, path: model.onnx}\nstreams:\n  - name: cam\n    model: det\n");
  CHECK_MESSAGE(contains(message, R"(streams[0]: missing required key "uri" (line 4))"), message);
  CHECK(contains(folder.error("- a\n- b\n"),
                 "test.yaml: expected a mapping with models and streams, got a list (line 1)"));
  CHECK(contains(folder.error(std::string(kValid) + "events: 3\n"), "events: expected a mapping, got"));
}

TEST_CASE("duplicate names name both lines; streams must name a defined model") {
  const ConfigFolder folder;
  const std::string message = folder.error(R"(models:
  - {name: det, path: model.onnx}
  - {name: det, path: model.onnx}
streams:
  - {name: cam, uri: test://, model: det}
  - {name: cam, uri: test://, model: det}
  - {name: other, uri: test://, model: dte}
)");
  CHECK_MESSAGE(
      contains(message,
               R"(models[1].name: duplicate model name "det"; first defined at models[0].name (line 2) (line 3))"),
      message);
  CHECK(contains(
      message, R"(streams[1].name: duplicate stream name "cam"; first defined at streams[0].name (line 5) (line 6))"));
  CHECK(
      contains(message, R"(streams[2].model: unknown model "dte"; models defined: det (line 7); did you mean "det"?)"));
  CHECK(contains(folder.error(with_stream_key("name: again")), R"(duplicate key "name" (first at line 5) (line 8))"));
}

TEST_CASE("missing model and labels files are named with their resolved path") {
  const ConfigFolder folder;
  const std::string message = folder.error(R"(models:
  - name: det
    path: missing.onnx
    labels: sub
streams:
  - {name: cam, uri: test://, model: det}
)");
  CHECK_MESSAGE(
      contains(message, "models[0].path: file not found: " + (folder.path() / "missing.onnx").string() + " (line 3)"),
      message);
  CHECK(contains(message, "models[0].labels: not a regular file: " + (folder.path() / "sub").string() + " (line 4)"));
}

TEST_CASE("stream uris: supported schemes only, file sources must exist") {
  const ConfigFolder folder;
  auto uri_error = [&](std::string_view uri) {
    return folder.error("models: [{name: det, path: model.onnx}]\nstreams:\n  - {name: cam, model: det, uri: '" +
                        std::string(uri) + "'}\n");
  };
  const std::string http = uri_error("http://example.com/a.mp4");
  CHECK_MESSAGE(
      contains(
          http,
          R"(streams[0].uri: unsupported uri scheme "http://"; supported: file://, rtsp://, rtsps://, v4l2:// and test://)"),
      http);
  CHECK(contains(http, "(line 3)"));
  CHECK(contains(uri_error("gone.mp4"), "video file not found: " + (folder.path() / "gone.mp4").string()));
  CHECK(contains(uri_error("file://street.mp4"), "file:// needs an absolute path"));
  CHECK(contains(uri_error("rtsp:///path"), "rtsp uri without a host"));
  CHECK(contains(uri_error("v4l2://video0"), "v4l2 uri must name a device"));
  CHECK(contains(uri_error("test://a b"), "test:// pattern must be a word"));
}

TEST_CASE("scheme-specific keys are errors on other schemes") {
  const ConfigFolder folder;
  const std::string message = folder.error(R"(models: [{name: det, path: model.onnx}]
streams:
  - name: cam
    uri: rtsp://127.0.0.1:8554/street
    model: det
    loop: false
  - name: file
    uri: street.mp4
    model: det
    rtsp-transport: udp
    framerate: 10
  - name: live
    uri: v4l2:///dev/video0
    model: det
    realtime: true
)");
  CHECK_MESSAGE(
      contains(message, "streams[0].loop: applies only to file:// streams; this stream's uri is rtsp:// (line 6)"),
      message);
  CHECK(contains(message,
                 "streams[1].rtsp-transport: applies only to rtsp:// and rtsps:// streams; this stream's uri is "
                 "file:// (line 10)"));
  CHECK(contains(message, "streams[1].framerate: applies only to test:// streams"));
  CHECK(contains(
      message,
      "streams[2].realtime: applies only to file:// and test:// streams; this stream's uri is v4l2:// (line 15)"));
}

TEST_CASE("zones and lines: point lists, shapes, names and tracking") {
  const ConfigFolder folder;
  // Lines 8-10: one region list with one entry.
  const auto with_region = [](std::string_view list, std::string_view points, std::string_view more = "") {
    return with_stream_key(list) + "      - name: a\n        points: " + std::string(points) + "\n" + std::string(more);
  };
  std::string message = folder.error(with_region("zones:", "[[0, 0], [1, 0]]"));
  CHECK_MESSAGE(contains(message,
                         "streams[0].zones[0].points: expected list of 3..64 [x, y] points, x and y in "
                         "0..1, got 2 points (line 10)"),
                message);
  message = folder.error(with_region("zones:", "[[0, 0], [1.5, 0], [1, 1]]"));
  CHECK_MESSAGE(contains(message,
                         "streams[0].zones[0].points[1]: expected [x, y] with x and y numbers in 0..1 "
                         "(fractions of the frame's width and height), got [1.5, 0] (line 10)"),
                message);
  CHECK(contains(folder.error(with_region("zones:", "[[0, 0], [0.5, x], [1, 1]]")),
                 "zones[0].points[1]: expected [x, y] with x and y numbers in 0..1 (fractions of the frame's width "
                 "and height), got [0.5, x]"));
  CHECK(contains(folder.error(with_region("zones:", "[[0, 0], [0.5], [1, 1]]")), "got [0.5] (line 10)"));
  CHECK(contains(folder.error(with_region("zones:", "[[0, 0], [[0.5, 1]], [1, 1]]")), "got a list (line 10)"));
  CHECK(contains(folder.error(with_region("zones:", "[[0, 0], [1e400, 0], [1, 1]]")), "got [1e400, 0] (line 10)"));
  CHECK(contains(folder.error(with_region("zones:", "[[0, 0], [0.5, 0.5], [1, 1]]")),
                 "streams[0].zones[0].points: the zone's points enclose no area (they lie on one line) (line 10)"));
  CHECK(contains(folder.error(with_region("lines:", "[[0, 0], [0.5, 0.5], [1, 1]]")),
                 "streams[0].lines[0].points: expected list of 2 [x, y] points"));
  CHECK(contains(folder.error(with_region("lines:", "[[0.5, 0.5], [0.5, 0.5]]")),
                 "streams[0].lines[0].points: the line's two points are the same (line 10)"));
  CHECK(contains(folder.error(with_region("lines:", "[[0, 0.5], [1, 0.5]]", "    track: false\n")),
                 "streams[0].lines: counting lines follow tracked objects: they need track: true"));
  CHECK(contains(
      folder.error(with_region("zones:", "[[0, 0], [1, 0], [1, 1]]", "        loiter-s: 5\n    track: false\n")),
      "streams[0].zones[0].loiter-s: loitering is measured on tracked objects: it needs track: true "
      "(line 11)"));
  CHECK(contains(folder.error(with_region("zones:", "[[0, 0], [1, 0], [1, 1]]", "        loiter-s: -1\n")),
                 "streams[0].zones[0].loiter-s: expected"));
  CHECK(contains(folder.error(with_stream_key("track: false\n    snapshots: shots")),
                 "streams[0].snapshots: snapshots are taken when tracked objects appear, enter zones or cross "
                 "lines: they need track: true (line 9)"));
  CHECK(contains(folder.error(with_region("zones:", "[[0, 0], [1, 0], [1, 1]]", "        colour: red\n")),
                 "streams[0].zones[0].colour: unknown key (line 11)"));
  CHECK(
      contains(folder.error(with_stream_key("zones: []")), "streams[0].zones: expected a non-empty list of mappings"));
  CHECK(contains(folder.error(with_stream_key("zone:\n      - name: a")),
                 "streams[0].zone: unknown key (line 8); did you mean \"zones\"?"));
  message = folder.error(with_region("zones:", "[[0, 0], [1, 0], [1, 1]]",
                                     "    lines:\n      - name: a\n        points: [[0, 0.5], [1, 0.5]]\n"));
  CHECK_MESSAGE(contains(message,
                         "streams[0].lines[0].name: duplicate zone, line or mask name \"a\"; first defined at "
                         "streams[0].zones[0].name (line 9) (line 12)"),
                message);
}

TEST_CASE("masks and object filters: shapes, names and bounds that some box can meet") {
  const ConfigFolder folder;
  // Lines 8-10: a mask; or lines 8-9 on: a filter.
  const auto with_mask = [](std::string_view points, std::string_view more = "") {
    return with_stream_key("masks:") + "      - name: m\n        points: " + std::string(points) + "\n" +
           std::string(more);
  };
  const auto with_filter = [](std::string_view keys) {
    return with_stream_key("filters:") + "      - " + std::string(keys) + "\n";
  };
  CHECK(contains(folder.error(with_mask("[[0, 0], [1, 0]]")),
                 "streams[0].masks[0].points: expected list of 3..64 [x, y] points, x and y in 0..1, got 2 points "
                 "(line 10)"));
  CHECK(contains(folder.error(with_mask("[[0, 0], [0.5, 0.5], [1, 1]]")),
                 "streams[0].masks[0].points: the mask's points enclose no area (they lie on one line) (line 10)"));
  CHECK(contains(folder.error(with_mask("[[0, 0], [1, 0], [1, 1]]", "        loiter-s: 3\n")),
                 "streams[0].masks[0].loiter-s: unknown key (line 11)"));
  std::string message = folder.error(
      with_mask("[[0, 0], [1, 0], [1, 1]]", "    zones:\n      - name: m\n        points: [[0, 0], [1, 0], [1, 1]]\n"));
  CHECK_MESSAGE(contains(message,
                         "streams[0].masks[0].name: duplicate zone, line or mask name \"m\"; first defined at "
                         "streams[0].zones[0].name (line 12) (line 9)"),
                message);
  CHECK(contains(folder.error(with_filter("min-score: 1.5")),
                 "streams[0].filters[0].min-score: expected number in 0..1, got \"1.5\" (line 9)"));
  CHECK(contains(folder.error(with_filter("max-ratio: -1")), "streams[0].filters[0].max-ratio: expected number in"));
  CHECK(
      contains(folder.error(with_filter("min-area: 0.5\n        max-area: 0.2")),
               "streams[0].filters[0].max-area: max-area 0.2 is not above min-area 0.5: no box would pass (line 10)"));
  CHECK(contains(folder.error(with_filter("min-area: 1")),
                 "streams[0].filters[0].min-area: max-area 1 is not above min-area 1: no box would pass (line 9)"));
  CHECK(contains(folder.error(with_filter("min-ratio: 2\n        max-ratio: 2")),
                 "streams[0].filters[0].max-ratio: max-ratio 2 is not above min-ratio 2: no box would pass (line 10)"));
  CHECK(contains(folder.error(with_filter("classes: [person]")),
                 "streams[0].filters[0]: the filter bounds nothing: set min-score, min-area, max-area, min-ratio or "
                 "max-ratio (line 9)"));
  CHECK(contains(folder.error(with_filter("min-scor: 0.5")),
                 "streams[0].filters[0].min-scor: unknown key (line 9); did you mean \"min-score\"?"));
  CHECK(contains(folder.error(with_stream_key("filters: {min-score: 0.5}")),
                 "streams[0].filters: expected a non-empty list of mappings"));
  // A filter with only a ratio floor is fine: max-ratio 0 means no ceiling.
  CHECK(folder.parse(with_filter("min-ratio: 1.2")).is_ok());
}

TEST_CASE("all problems are reported, one a line") {
  const ConfigFolder folder;
  const std::string message = folder.error(R"(models:
  - {name: det, path: model.onnx, threads: -1, fuse: 1}
streams:
  - {name: cam, uri: test://, model: det, queue-size: 0}
)");
  CHECK(message ==
        "test.yaml: models[0].threads: expected integer in 0..256, got \"-1\" (line 2)\n"
        "test.yaml: models[0].fuse: expected true or false, got \"1\" (line 2)\n"
        "test.yaml: streams[0].queue-size: expected integer in 1..64, got \"0\" (line 4)");
}

TEST_CASE("YAML syntax errors carry yaml-cpp's message and the line") {
  const ConfigFolder folder;
  const std::string message = folder.error("models:\n  - name: det\n    path: [model.onnx\nstreams: []\n");
  CHECK_MESSAGE(contains(message, "test.yaml: YAML syntax error: "), message);
  CHECK(contains(message, "(line "));
}

TEST_CASE("load_config_file: missing files and folders") {
  const ConfigFolder folder;
  const Result<DaemonConfig> missing = load_config_file(folder.path() / "nope.yaml");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(contains(missing.status().message(), "nope.yaml"));
  const Result<DaemonConfig> folder_given = load_config_file(folder.path());
  REQUIRE_FALSE(folder_given.is_ok());
  CHECK(folder_given.status().code() == StatusCode::kIoError);
  const Result<DaemonConfig> bad = load_config_file(folder.write("bad.yaml", "models: 3\n"));
  REQUIRE_FALSE(bad.is_ok());
  CHECK(
      contains(bad.status().message(), (folder.path() / "bad.yaml").string() + ": models: expected a non-empty list"));
}

TEST_CASE("a model's input size comes as width and height together") {
  const ConfigFolder folder;
  const std::string message = folder.error(R"(models:
  - {name: det, path: model.onnx, input-width: 640}
streams:
  - {name: cam, uri: test://, model: det}
)");
  CHECK_MESSAGE(contains(message, "models[0].input-width: give input-width and input-height together (line 2)"),
                message);
  CHECK(contains(folder.error("models:\n  - {name: det, path: model.onnx, input-height: -1}\nstreams:\n"
                              "  - {name: cam, uri: test://, model: det}\n"),
                 "models[0].input-height: expected integer in 0..8192"));
}
