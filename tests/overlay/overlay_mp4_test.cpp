// The overlay recorded to MP4 from the first seconds of the pedestrian clip (real decoder, real
// model, real encoder), then read back with GStreamer: frame count, size, and the boxes' colour
// where the model found people.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include <unistd.h>

#include "pipeline/daemon/model_runner.h"
#include "pipeline/overlay/overlay_output.h"
#include "pipeline/overlay/overlay_renderer.h"
#include "pipeline/overlay/overlay_style.h"
#include "pipeline/video/video_source.h"
#include "tests/overlay/synthetic_frame.h"
#include "tests/support/assets.h"

namespace edgefuse {
namespace {

constexpr int kFrames = 90;        // 3 s at 30 fps
constexpr int kCheckedFrame = 45;  // whose boxes are looked for in the file

// Frames from a source, with back-pressure: the decoder waits while `limit` frames are queued.
struct FrameQueue {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<DecodedFrame> frames;
  bool stopping = false;

  void push(DecodedFrame frame, size_t limit) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return stopping || frames.size() < limit; });
    if (stopping) return;
    frames.push_back(std::move(frame));
    changed.notify_all();
  }
  std::optional<DecodedFrame> pop(std::chrono::seconds limit) {
    std::unique_lock lock(mutex);
    if (!changed.wait_for(lock, limit, [&] { return !frames.empty(); })) return std::nullopt;
    DecodedFrame frame = std::move(frames.front());
    frames.pop_front();
    changed.notify_all();
    return frame;
  }
  void stop() {
    const std::lock_guard lock(mutex);
    stopping = true;
    changed.notify_all();
  }
};

Result<std::unique_ptr<VideoSource>> file_source(const std::filesystem::path& path,
                                                 VideoSource::FrameCallback callback) {
  EF_ASSIGN_OR_RETURN(SourceAddress address, parse_source_uri(path.string()));
  VideoSourceOptions options;
  options.name = "clip";
  options.address = address;
  options.pipeline.realtime = false;
  return VideoSource::create(options, std::move(callback));
}

// What reading a recorded file back with the daemon's decoding gives: how many frames, the last
// one's size, and frame `keep` itself.
struct ReadBack {
  int64_t frames = 0;
  int width = 0, height = 0;
  std::optional<DecodedFrame> kept;
  SourceState state = SourceState::kCreated;
};

ReadBack read_back(const std::filesystem::path& mp4, int64_t keep = -1) {
  std::mutex mutex;
  ReadBack result;
  Result<std::unique_ptr<VideoSource>> reader = file_source(mp4, [&](DecodedFrame frame) {
    const std::lock_guard lock(mutex);
    ++result.frames;
    result.width = frame.width();
    result.height = frame.height();
    if (frame.number == keep) result.kept = std::move(frame);
  });
  REQUIRE(reader.is_ok());
  REQUIRE((*reader)->start().is_ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(40);
  while (!(*reader)->done() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.state = (*reader)->state();
  (*reader)->stop();  // no callback runs after this
  return result;
}

// Median of the values in a column segment of a plane.
int median_in_column(const DecodedFrame& frame, int plane, int x, int y0, int y1) {
  std::vector<int> values;
  const FramePlanes& p = frame.planes();
  for (int y = y0; y < y1; ++y) {
    if (plane == 0) {
      values.push_back(p.data[0][static_cast<size_t>(y) * p.stride[0] + x]);
    } else if (frame.format() == FramePixelFormat::kNV12) {
      values.push_back(p.data[1][static_cast<size_t>(y / 2) * p.stride[1] + 2 * (x / 2) + (plane - 1)]);
    } else {
      values.push_back(p.data[plane][static_cast<size_t>(y / 2) * p.stride[plane] + x / 2]);
    }
  }
  std::nth_element(values.begin(), values.begin() + static_cast<long>(values.size() / 2), values.end());
  return values[values.size() / 2];
}

TEST_CASE("the first 3 s of the clip, with boxes, recorded to MP4 and read back") {
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ModelConfig config;
  config.name = "yolox";
  config.path = model;
  Result<std::unique_ptr<ModelRunner>> runner = ModelRunner::create(config);
  REQUIRE_MESSAGE(runner.is_ok(), runner.status().to_string());

  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("edgefuse_overlay_mp4_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  const std::filesystem::path mp4 = folder / "overlay.mp4";

  OverlayOptions options;
  options.stream_name = "clip";
  options.labels = (*runner)->labels();
  options.mp4_path = mp4;
  options.lossless = true;
  Result<std::unique_ptr<OverlayOutput>> output = OverlayOutput::create(options);
  REQUIRE_MESSAGE(output.is_ok(), output.status().to_string());

  FrameQueue queue;
  Result<std::unique_ptr<VideoSource>> source =
      file_source(clip, [&queue](DecodedFrame frame) { queue.push(std::move(frame), 3); });
  REQUIRE(source.is_ok());
  REQUIRE((*source)->start().is_ok());
  std::vector<Detection> checked_detections;
  for (int i = 0; i < kFrames; ++i) {
    std::optional<DecodedFrame> frame = queue.pop(std::chrono::seconds(20));
    REQUIRE_MESSAGE(frame.has_value(), "no frame ", i, " from the clip: ", (*source)->error());
    const DecodedFrame* frames[] = {&*frame};
    std::vector<Result<std::vector<Detection>>> results = (*runner)->detect(frames);
    REQUIRE(results.at(0).is_ok());
    if (i == kCheckedFrame) checked_detections = results[0].value();
    (*output)->submit(*frame, std::move(results[0]).value(), {30.0, 50.0});
  }
  queue.stop();
  (*source)->stop();
  const Status closed = (*output)->close();
  REQUIRE_MESSAGE(closed.is_ok(), closed.to_string());
  const OverlayCounters counters = (*output)->counters();
  CHECK(counters.submitted == kFrames);
  CHECK(counters.dropped == 0);
  CHECK(counters.written == kFrames);
  MESSAGE("encoder: " << (*output)->encoder_name() << ", file " << std::filesystem::file_size(mp4) << " bytes");
  REQUIRE(checked_detections.size() >= 2);  // pedestrians in every frame of the clip

  // Read the file back with the same decoding pipeline the daemon uses.
  ReadBack back = read_back(mp4, kCheckedFrame);
  CHECK(back.state == SourceState::kFinished);
  const int64_t count = back.frames;
  CHECK(count >= kFrames - 1);
  CHECK(count <= kFrames + 1);
  CHECK(back.width == 1920);
  CHECK(back.height == 1080);
  std::optional<DecodedFrame>& kept = back.kept;
  REQUIRE(kept.has_value());

  // Each box's left edge, down its middle (clear of the label), has the class colour after H.264.
  const int t = box_thickness(1080);
  int matched = 0, looked = 0;
  for (const Detection& d : checked_detections) {
    const int x = std::max(0, static_cast<int>(std::floor(d.box.x1 / 2)) * 2) + t / 2;
    const int y0 = static_cast<int>(d.box.y1 + d.box.height() * 0.3f),
              y1 = static_cast<int>(d.box.y1 + d.box.height() * 0.7f);
    if (d.box.height() < 40 || x >= 1920 || y0 < 0 || y1 > 1080) continue;
    ++looked;
    const YuvColor expected = to_yuv(class_color(d.class_id), kept->bt709);
    const int y = median_in_column(*kept, 0, x, y0, y1), u = median_in_column(*kept, 1, x, y0, y1),
              v = median_in_column(*kept, 2, x, y0, y1);
    CAPTURE(y);
    CAPTURE(u);
    CAPTURE(v);
    matched += std::abs(y - expected.y) <= 24 && std::abs(u - expected.u) <= 20 && std::abs(v - expected.v) <= 20;
  }
  MESSAGE("frames read back: " << count << "; box edges in their class colour: " << matched << " of " << looked);
  REQUIRE(looked >= 2);
  // Boxes of overlapping people may cover each other's edges; most must show.
  CHECK(matched * 10 >= looked * 8);
  kept.reset();
  std::filesystem::remove_all(folder);
}

TEST_CASE("when the frame size changes the recording goes on in the next file, each of one size") {
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("edgefuse_overlay_sizes_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  OverlayOptions options;
  options.stream_name = "camera";
  options.mp4_path = folder / "camera.mp4";
  options.lossless = true;
  Result<std::unique_ptr<OverlayOutput>> output = OverlayOutput::create(options);
  REQUIRE_MESSAGE(output.is_ok(), output.status().to_string());
  // 20 frames at 320 x 240, 15 at 480 x 272 (a night profile), 10 at 320 x 240 again; 30 fps.
  const std::array<std::array<int, 3>, 3> runs = {{{320, 240, 20}, {480, 272, 15}, {320, 240, 10}}};
  int64_t number = 0;
  for (const auto& [width, height, frames] : runs) {
    for (int i = 0; i < frames; ++i, ++number) {
      DecodedFrame frame = test::make_textured_frame(width, height, FramePixelFormat::kNV12);
      frame.number = number;
      frame.pts_ns = number * 33'333'333;
      (*output)->submit(frame, {}, {});
    }
  }
  const Status closed = (*output)->close();
  REQUIRE_MESSAGE(closed.is_ok(), closed.to_string());
  CHECK((*output)->counters().written == number);
  CHECK((*output)->counters().files == 3);
  for (size_t file = 0; file < runs.size(); ++file) {
    const std::filesystem::path path = overlay_recording_path(options.mp4_path, static_cast<int64_t>(file));
    CAPTURE(path);
    CHECK(path.parent_path() == folder);
    CHECK(path.filename() == (file == 0 ? std::string("camera.mp4") : "camera." + std::to_string(file) + ".mp4"));
    REQUIRE(std::filesystem::exists(path));
    const ReadBack back = read_back(path);
    CHECK(back.state == SourceState::kFinished);  // finalised: playable to its end
    CHECK(back.frames == runs[file][2]);
    CHECK(back.width == runs[file][0]);
    CHECK(back.height == runs[file][1]);
  }
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace edgefuse
