// The example configs in samples/configs parse. They refer to assets as ../../assets/...; here
// those references point into the test assets folder (EDGEFUSE_ASSETS_DIR), wherever it is.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "pipeline/config/config.h"
#include "tests/support/assets.h"

using namespace edgefuse;

namespace {

constexpr std::string_view kAssetPrefix = "../../assets/";

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Parses a sample with its asset references redirected; nullopt (after a skip message) when an asset is missing.
std::optional<Result<DaemonConfig>> parse_sample(const std::filesystem::path& file) {
  std::string text = read_text(file);
  std::string redirected;
  size_t start = 0;
  for (size_t found = text.find(kAssetPrefix); found != std::string::npos; found = text.find(kAssetPrefix, start)) {
    const size_t end = text.find_first_of(" \t\n#\"'", found);
    const std::string relative = text.substr(found + kAssetPrefix.size(), end - found - kAssetPrefix.size());
    if (edgefuse::test::find_asset(relative).empty()) {
      if (edgefuse::test::assets_required()) FAIL("required asset missing: " << relative);
      MESSAGE("SKIPPED: " << file.filename().string() << " needs asset " << relative);
      return std::nullopt;
    }
    redirected += text.substr(start, found - start) + (edgefuse::test::assets_dir() / relative).string();
    start = end;
  }
  redirected += text.substr(start);
  return parse_config(redirected, file.parent_path(), file.filename().string());
}

}  // namespace

TEST_CASE("every sample config parses") {
  const std::filesystem::path folder = EDGEFUSE_SAMPLE_CONFIGS_DIR;
  std::map<std::string, DaemonConfig> parsed;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".yaml") continue;
    CAPTURE(entry.path().string());
    const std::optional<Result<DaemonConfig>> config = parse_sample(entry.path());
    if (!config) continue;
    REQUIRE_MESSAGE(config->is_ok(), config->status().message());
    parsed.emplace(entry.path().filename().string(), config->value());
  }
  if (parsed.count("street.yaml")) {
    const DaemonConfig& street = parsed.at("street.yaml");
    REQUIRE(street.streams.size() == 1);
    CHECK(street.streams[0].uri.starts_with("file:///"));
    CHECK(street.streams[0].loop);
    CHECK(street.streams[0].masks.size() == 1);
    CHECK(street.streams[0].filters.size() == 1);
  }
  if (parsed.count("two-streams.yaml")) {
    const DaemonConfig& two = parsed.at("two-streams.yaml");
    REQUIRE(two.models.size() == 1);
    CHECK(two.models[0].max_batch == 2);
    REQUIRE(two.streams.size() == 2);
    CHECK(two.streams[0].model == two.streams[1].model);
  }
  if (parsed.count("rtsp.yaml")) CHECK(parsed.at("rtsp.yaml").streams.at(0).uri == "rtsp://127.0.0.1:8554/street");
  if (parsed.count("faces.yaml")) {
    CHECK(parsed.at("faces.yaml").models.at(0).family == "blazeface");
    CHECK(parsed.at("faces.yaml").models.at(0).path.filename() == "blazeface_front_128.onnx");
  }
}

TEST_CASE("the reference text documents every key of the schema") {
  const std::string reference = config_reference();
  // Keys listed independently of the schema tables, so a key dropped from a table is caught.
  for (const char* key : {"models",
                          "streams",
                          "events",
                          "stats-interval-s",
                          "models[].name",
                          "models[].path",
                          "models[].family",
                          "models[].labels",
                          "models[].device",
                          "models[].threads",
                          "models[].score-threshold",
                          "models[].iou-threshold",
                          "models[].max-detections",
                          "models[].max-batch",
                          "models[].batch-timeout-ms",
                          "models[].fuse",
                          "streams[].name",
                          "streams[].uri",
                          "streams[].model",
                          "streams[].classes",
                          "streams[].inference-interval",
                          "streams[].loop",
                          "streams[].queue-size",
                          "streams[].rtsp-transport",
                          "streams[].decoder",
                          "streams[].width",
                          "streams[].height",
                          "streams[].framerate",
                          "streams[].motion-gate",
                          "streams[].motion-area-percent",
                          "streams[].motion-block-delta",
                          "streams[].motion-refresh-s",
                          "streams[].snapshots",
                          "streams[].snapshots-max-mb",
                          "streams[].zones",
                          "streams[].lines",
                          "streams[].zones[].name",
                          "streams[].zones[].points",
                          "streams[].zones[].classes",
                          "streams[].lines[].name",
                          "streams[].lines[].points",
                          "streams[].lines[].classes",
                          "events.path",
                          "events.empty-frames"}) {
    CAPTURE(key);
    CHECK(reference.find(std::string(key) + "\n    type:") != std::string::npos);
  }
  CHECK(reference.find("integer in 1..1000") != std::string::npos);  // inference-interval's range
  CHECK(reference.find("one of cpu, cuda, auto") != std::string::npos);
  CHECK(reference.find("list of 3..64 [x, y] points, x and y in 0..1") != std::string::npos);  // a zone's points
  CHECK(reference.find("list of 2 [x, y] points, x and y in 0..1") != std::string::npos);      // a line's
  CHECK(reference.find("default:  0.45") != std::string::npos);  // iou-threshold, read from ModelConfig{}
}
