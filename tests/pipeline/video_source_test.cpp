// Real GStreamer pipelines: videotestsrc, the 1080p30 H.264 clip, and files that are not video.
#include "pipeline/video/video_source.h"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/support/assets.h"

namespace edgefuse {
namespace {

struct Collected {
  std::mutex mutex;
  std::vector<int64_t> numbers;
  std::vector<int64_t> pts;
  int width = 0, height = 0;
  FramePixelFormat format = FramePixelFormat::kI420;
  bool planes_ok = true;
};

Result<std::unique_ptr<VideoSource>> collecting_source(const std::string& uri, Collected& out, bool realtime = false) {
  EF_ASSIGN_OR_RETURN(SourceAddress address, parse_source_uri(uri));
  VideoSourceOptions options;
  options.name = "test";
  options.address = address;
  options.pipeline.realtime = realtime;
  options.pipeline.test_width = 320;
  options.pipeline.test_height = 240;
  return VideoSource::create(options, [&out](DecodedFrame frame) {
    const std::lock_guard lock(out.mutex);
    out.numbers.push_back(frame.number);
    out.pts.push_back(frame.pts_ns);
    out.width = frame.width();
    out.height = frame.height();
    out.format = frame.format();
    const int planes = frame.format() == FramePixelFormat::kNV12 ? 2 : 3;
    for (int p = 0; p < planes; ++p) {
      const int min_stride = p == 0 || planes == 2 ? frame.width() : frame.width() / 2;
      out.planes_ok = out.planes_ok && frame.planes().data[p] != nullptr && frame.planes().stride[p] >= min_stride;
    }
  });
}

bool wait_until_done(const VideoSource& source, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!source.done() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return source.done();
}

TEST_CASE("test:// delivers NV12 frames of the requested size, numbered in order") {
  Collected collected;
  Result<std::unique_ptr<VideoSource>> source = collecting_source("test://ball", collected);
  REQUIRE(source.is_ok());
  REQUIRE((*source)->start().is_ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((*source)->frames_decoded() < 10 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  (*source)->stop();
  const std::lock_guard lock(collected.mutex);
  REQUIRE(collected.numbers.size() >= 10);
  for (size_t i = 0; i < collected.numbers.size(); ++i) CHECK(collected.numbers[i] == static_cast<int64_t>(i));
  CHECK(collected.width == 320);
  CHECK(collected.height == 240);
  CHECK(collected.format == FramePixelFormat::kNV12);
  CHECK(collected.planes_ok);
  CHECK((*source)->state() == SourceState::kFinished);
  CHECK((*source)->error().empty());
}

TEST_CASE("the 1080p30 clip decodes every frame, in order, then ends") {
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  Collected collected;
  Result<std::unique_ptr<VideoSource>> source = collecting_source(clip.string(), collected);
  REQUIRE(source.is_ok());
  REQUIRE((*source)->start().is_ok());
  REQUIRE(wait_until_done(**source, std::chrono::seconds(120)));
  CHECK((*source)->state() == SourceState::kFinished);
  const std::lock_guard lock(collected.mutex);
  CHECK(collected.numbers.size() == 795);  // the clip's frame count (data/README.md)
  CHECK(collected.width == 1920);
  CHECK(collected.height == 1080);
  CHECK(collected.planes_ok);
  for (size_t i = 1; i < collected.pts.size(); ++i) CHECK(collected.pts[i] > collected.pts[i - 1]);
  CHECK(!(*source)->decoder_name().empty());
}

TEST_CASE("a missing file and a file that is not video fail with a message, without crashing") {
  Collected collected;
  Result<std::unique_ptr<VideoSource>> missing = collecting_source("/nonexistent/clip.mp4", collected);
  REQUIRE(missing.is_ok());
  const Status started = (*missing)->start();
  if (started.is_ok()) REQUIRE(wait_until_done(**missing, std::chrono::seconds(10)));
  CHECK((*missing)->state() == SourceState::kFailed);
  CHECK((*missing)->error().find("clip.mp4") != std::string::npos);

  const std::filesystem::path junk = std::filesystem::temp_directory_path() / "edgefuse_not_video.mp4";
  {
    std::ofstream out(junk, std::ios::binary);
    for (int i = 0; i < 100000; ++i) out.put(static_cast<char>((i * 7919) & 0xff));
  }
  Result<std::unique_ptr<VideoSource>> garbage = collecting_source(junk.string(), collected);
  REQUIRE(garbage.is_ok());
  if ((*garbage)->start().is_ok()) REQUIRE(wait_until_done(**garbage, std::chrono::seconds(10)));
  CHECK((*garbage)->state() == SourceState::kFailed);
  CHECK(!(*garbage)->error().empty());
  std::filesystem::remove(junk);
}

TEST_CASE("an unknown decoder element is an error naming it") {
  VideoSourceOptions options;
  options.name = "bad";
  options.address = {SourceKind::kFile, "/tmp/x.mp4"};
  options.pipeline.decoder = "no_such_decoder_element";
  Result<std::unique_ptr<VideoSource>> source = VideoSource::create(options, [](DecodedFrame) {});
  REQUIRE(!source.is_ok());
  CHECK(source.status().message().find("no_such_decoder_element") != std::string::npos);
}

}  // namespace
}  // namespace edgefuse
