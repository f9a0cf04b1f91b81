// Snapshots on synthetic frames: whole JPEGs with the boxes drawn appear under their names, the
// folder stays under its size limit (counting an earlier run's files), and nothing half-written
// is ever left.
#include "pipeline/overlay/snapshot_writer.h"

#include <doctest/doctest.h>

#include <chrono>
#include <fstream>

#include <opencv2/imgcodecs.hpp>

#include "pipeline/overlay/overlay_style.h"
#include "tests/overlay/synthetic_frame.h"

namespace edgefuse {
namespace {

std::filesystem::path fresh_folder(const std::string& name) {
  const std::filesystem::path folder = std::filesystem::temp_directory_path() / ("edgefuse_snapshots_" + name);
  std::filesystem::remove_all(folder);
  return folder;
}

Detection person_at(float x1, float y1, float x2, float y2) {
  Detection d;
  d.box = {x1, y1, x2, y2};
  d.score = 0.9f;
  d.track_id = 7;
  return d;
}

}  // namespace

TEST_CASE("snapshots: a JPEG of the frame with its box drawn, under the event's name") {
  const std::filesystem::path folder = fresh_folder("one");
  SnapshotOptions options;
  options.folder = folder / "street";  // created
  options.text.labels = {"person"};
  Result<std::unique_ptr<SnapshotWriter>> writer = SnapshotWriter::create(options);
  REQUIRE_MESSAGE(writer.is_ok(), writer.status().message());
  const DecodedFrame frame = test::make_grey_frame(640, 360);
  const std::filesystem::path path = (*writer)->submit(frame, {person_at(100, 80, 300, 340)}, "run-42");
  CHECK(path == options.folder / "run-42.jpg");
  (*writer)->close();
  CHECK((*writer)->counters().written == 1);
  CHECK((*writer)->error().is_ok());
  CHECK((*writer)->submit(frame, {}, "after-close").empty());

  const cv::Mat image = cv::imread(path.string(), cv::IMREAD_COLOR);
  REQUIRE(!image.empty());
  CHECK(image.cols == 640);
  CHECK(image.rows == 360);
  // The box's left edge in the person colour (JPEG: within a tolerance), the grey picture beside it.
  const BgrColor person = class_color(0);
  const cv::Vec3b edge = image.at<cv::Vec3b>(200, 101), beside = image.at<cv::Vec3b>(200, 120);
  CHECK(std::abs(edge[1] - person.g) < 40);
  CHECK(std::abs(edge[0] - person.b) < 40);
  CHECK(std::abs(beside[1] - 128) < 12);
  CHECK(std::abs(beside[0] - 128) < 12);
  for (const auto& entry : std::filesystem::directory_iterator(options.folder)) {
    CHECK(entry.path().extension() == ".jpg");  // no .part left behind
  }
  std::filesystem::remove_all(folder);
}

TEST_CASE("snapshots: the folder stays under its limit, the oldest go first, an earlier run's too") {
  const std::filesystem::path folder = fresh_folder("limit");
  std::filesystem::create_directories(folder);
  // An earlier run's snapshot, older than anything written now, and a file that is not one.
  {
    std::ofstream(folder / "earlier.jpg") << std::string(30'000, 'x');
    std::ofstream(folder / "notes.txt") << "kept";
    std::filesystem::last_write_time(folder / "earlier.jpg",
                                     std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  }
  SnapshotOptions options;
  options.folder = folder;
  options.queue_size = 64;
  const DecodedFrame frame = test::make_textured_frame(320, 240, FramePixelFormat::kI420);  // hard to compress
  // Measure one image to size the limit at about three of them.
  {
    SnapshotOptions probe_options = options;
    probe_options.folder = folder / "probe";
    auto probe = SnapshotWriter::create(probe_options);
    REQUIRE(probe.is_ok());
    (*probe)->submit(frame, {}, "probe");
  }
  const auto one = static_cast<int64_t>(std::filesystem::file_size(folder / "probe" / "probe.jpg"));
  std::filesystem::remove_all(folder / "probe");
  options.max_bytes = 3 * one + one / 2;
  auto writer = SnapshotWriter::create(options);
  REQUIRE(writer.is_ok());
  for (int i = 0; i < 6; ++i) (*writer)->submit(frame, {}, "shot-" + std::to_string(i));
  (*writer)->close();
  CHECK((*writer)->counters().written == 6);
  CHECK_FALSE(std::filesystem::exists(folder / "earlier.jpg"));  // the oldest went first
  CHECK(std::filesystem::exists(folder / "notes.txt"));          // not a snapshot: never touched
  for (int i = 0; i < 6; ++i)
    CHECK(std::filesystem::exists(folder / ("shot-" + std::to_string(i) + ".jpg")) == (i >= 3));
  CHECK((*writer)->counters().removed == 4);
  std::filesystem::remove_all(folder);
}
}  // namespace edgefuse

namespace edgefuse {

TEST_CASE("snapshots: while the queue is full a new one is not taken, and every path handed out is written") {
  const std::filesystem::path folder = fresh_folder("busy");
  SnapshotOptions options;
  options.folder = folder;
  options.queue_size = 1;
  auto writer = SnapshotWriter::create(options);
  REQUIRE(writer.is_ok());
  // About 15 ms each to write, submitted back to back: the one-place queue is full for most.
  const DecodedFrame frame = test::make_textured_frame(1920, 1080, FramePixelFormat::kNV12);
  std::vector<std::filesystem::path> named;
  for (int i = 0; i < 10; ++i) {
    const std::filesystem::path path = (*writer)->submit(frame, {}, "shot-" + std::to_string(i));
    if (!path.empty()) named.push_back(path);
  }
  (*writer)->close();
  const SnapshotCounters counters = (*writer)->counters();
  CHECK(counters.dropped > 0);
  CHECK(counters.written + counters.dropped == 10);
  CHECK(static_cast<int64_t>(named.size()) == counters.written);
  for (const std::filesystem::path& path : named) CHECK(std::filesystem::exists(path));
  std::filesystem::remove_all(folder);
}

}  // namespace edgefuse
