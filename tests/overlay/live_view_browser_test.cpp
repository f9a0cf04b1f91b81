// The live view in a real browser: headless Chromium opens the page on 127.0.0.1 while frames
// with boxes are being published, and its screenshot must show those boxes in their colours.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <opencv2/imgcodecs.hpp>
#include <unistd.h>

#include "pipeline/overlay/overlay_output.h"
#include "pipeline/overlay/overlay_style.h"
#include "tests/overlay/synthetic_frame.h"

namespace edgefuse {
namespace {

constexpr const char* kChromium = "/usr/bin/chromium";

// Pixels of the screenshot within `tolerance` (per BGR channel) of `color`.
int pixels_near(const cv::Mat& bgr, BgrColor color, int tolerance) {
  int count = 0;
  for (int y = 0; y < bgr.rows; ++y) {
    const auto* row = bgr.ptr<cv::Vec3b>(y);
    for (int x = 0; x < bgr.cols; ++x) {
      count += std::abs(row[x][0] - color.b) <= tolerance && std::abs(row[x][1] - color.g) <= tolerance &&
               std::abs(row[x][2] - color.r) <= tolerance;
    }
  }
  return count;
}

// Where one channel clearly dominates the other two (JPEG's chroma subsampling dims thin coloured
// lines, but their hue survives): the count and bounding box of such pixels.
struct HueRegion {
  int count = 0;
  cv::Rect bounds;
};

HueRegion dominant_channel_region(const cv::Mat& bgr, int channel, int margin) {
  HueRegion region;
  int x0 = bgr.cols, y0 = bgr.rows, x1 = -1, y1 = -1;
  for (int y = 0; y < bgr.rows; ++y) {
    const auto* row = bgr.ptr<cv::Vec3b>(y);
    for (int x = 0; x < bgr.cols; ++x) {
      const int c = row[x][channel], o1 = row[x][(channel + 1) % 3], o2 = row[x][(channel + 2) % 3];
      if (c - std::max(o1, o2) < margin) continue;
      ++region.count;
      x0 = std::min(x0, x), y0 = std::min(y0, y), x1 = std::max(x1, x), y1 = std::max(y1, y);
    }
  }
  if (region.count > 0) region.bounds = cv::Rect(x0, y0, x1 - x0 + 1, y1 - y0 + 1);
  return region;
}

std::string read_text(const std::filesystem::path& path) {
  std::string text;
  if (std::FILE* file = std::fopen(path.c_str(), "rb")) {
    char chunk[4096];
    for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, file)) > 0;) text.append(chunk, n);
    std::fclose(file);
  }
  return text;
}

TEST_CASE("headless Chromium shows the live view's boxes") {
  if (!std::filesystem::exists(kChromium)) {
    MESSAGE("SKIPPED: " << kChromium << " not installed (apt install chromium)");
    return;
  }
  OverlayOptions options;
  options.stream_name = "browser";
  options.labels = {"person", "bicycle", "car", "motorcycle", "airplane", "bus", "train"};
  options.http_port = 0;
  options.preview_width = 960;
  options.preview_fps = 10;
  Result<std::unique_ptr<OverlayOutput>> output = OverlayOutput::create(options);
  REQUIRE_MESSAGE(output.is_ok(), output.status().to_string());
  const int port = (*output)->http_port();
  REQUIRE(port > 0);

  // A camera stand-in: grey 1280x720 frames at about 15 fps with a person (green) and a train (red).
  std::atomic<bool> feeding{true};
  std::thread feeder([&] {
    Detection person, train;
    person.box = {200, 150, 520, 650};
    person.score = 0.9f;
    train.box = {700, 100, 1200, 500};
    train.class_id = 6;
    train.score = 0.8f;
    while (feeding.load()) {
      (*output)->submit(test::make_grey_frame(1280, 720), {person, train}, {15.0, 20.0});
      std::this_thread::sleep_for(std::chrono::milliseconds(66));
    }
  });

  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("edgefuse_overlay_browser_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  const std::filesystem::path png = folder / "screenshot.png", log = folder / "chromium.log";
  const std::string command =
      std::string("timeout -k 5 50 ") + kChromium +
      " --headless --no-sandbox --disable-gpu --disable-background-networking --disable-quic --no-first-run"
      " --disable-component-update --disable-sync --disable-dev-shm-usage --user-data-dir=" +
      (folder / "profile").string() + " --screenshot=" + png.string() +
      " --window-size=1280,800 --virtual-time-budget=3000 http://127.0.0.1:" + std::to_string(port) + "/ > " +
      log.string() + " 2>&1";
  const int rc = std::system(command.c_str());
  feeding = false;
  feeder.join();
  const Status closed = (*output)->close();
  CHECK(closed.is_ok());
  const std::string chromium_log = read_text(log);
  INFO("chromium's last words: " << chromium_log.substr(chromium_log.size() > 600 ? chromium_log.size() - 600 : 0));
  CHECK(rc == 0);
  REQUIRE(std::filesystem::exists(png));

  const cv::Mat shot = cv::imread(png.string(), cv::IMREAD_COLOR);
  REQUIRE(!shot.empty());
  CHECK(shot.cols == 1280);
  // The preview is 960x540 (scale 0.75): the person's 320x500 box appears as 240x375 plus its label
  // above, the train's 500x400 as 375x300 plus label. The page shows the image unscaled.
  const HueRegion green = dominant_channel_region(shot, 1, 80), red = dominant_channel_region(shot, 2, 80);
  CAPTURE(green.bounds);
  CAPTURE(red.bounds);
  CHECK(green.count > 1000);
  CHECK(red.count > 1000);
  CHECK(std::abs(green.bounds.width - 240) <= 6);
  CHECK((green.bounds.height >= 372 && green.bounds.height <= 375 + 30));
  CHECK(std::abs(red.bounds.width - 375) <= 6);
  CHECK((red.bounds.height >= 297 && red.bounds.height <= 300 + 30));
  // Relative placement as published: the train's box starts 375 preview pixels right of the person's.
  CHECK(std::abs((red.bounds.x - green.bounds.x) - 375) <= 6);
  // Solid colour where the labels are filled.
  CHECK(pixels_near(shot, class_color(0), 40) > 300);
  CHECK(pixels_near(shot, class_color(6), 60) > 300);
  const int grey = pixels_near(shot, {128, 128, 128}, 12);
  CHECK(grey > 960 * 540 / 2);
  if (green.count > 1000 && red.count > 1000 && grey > 960 * 540 / 2)
    std::filesystem::remove_all(folder);  // else kept to look at
}

}  // namespace
}  // namespace edgefuse
