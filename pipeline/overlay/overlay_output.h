// One stream's overlay output: draws its detections on a copy of each decoded frame and sends the
// result to an MP4 file (OverlayWriter) and/or a browser (LiveView). The daemon or the sample app
// calls submit() from its pipeline; a worker thread of its own does the copying, drawing and
// encoding, so submit() only queues (dropping the oldest waiting frame when the queue is full,
// unless `lossless`).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "models/detect/detection.h"
#include "pipeline/overlay/i420_image.h"
#include "pipeline/overlay/overlay_renderer.h"
#include "pipeline/video/decoded_frame.h"
#include "runtime/status.h"

namespace edgefuse {

class LiveView;
class OverlayWriter;

struct OverlayOptions {
  std::string stream_name;          // shown in the frame's corner
  std::vector<std::string> labels;  // class names by id (ModelRunner::labels())
  std::vector<Zone> zones;          // the stream's zones and counting lines, drawn on every frame
  std::vector<CountingLine> lines;
  std::vector<ObjectMask> masks;   // and its masks
  std::filesystem::path mp4_path;  // H.264 MP4 recording; empty: none (see overlay_recording_path)
  std::string encoder = "auto";    // "auto" (hardware when present, else x264enc) or one of OverlayWriter's list
  int bitrate_kbps = 0;            // 0: from frame size and fps
  double fps = 30;                 // the MP4's nominal rate (frames without timestamps are spaced by it)
  int http_port = -1;              // live view: -1 none, 0 any free port, else that port
  std::string bind_address = "127.0.0.1";
  int preview_width = 960;  // live view JPEG width
  double preview_fps = 10;  // live view JPEG rate cap
  int queue_size = 4;       // frames waiting to be drawn, 1..64
  bool lossless = false;    // true: submit() waits for room instead of dropping (offline recording)
};

struct OverlayCounters {
  int64_t submitted = 0;
  int64_t dropped = 0;  // pushed out of the full queue
  int64_t drawn = 0;
  int64_t written = 0;  // handed to the MP4 encoder
  int64_t files = 0;    // MP4 files begun: the first, then one more at each change of frame size
};

// The MP4 file the recording goes on in after the frame size changed `changes` times: mp4_path
// itself, then "NAME.1.mp4", "NAME.2.mp4"... beside it (a camera switching to its night profile
// changes resolution; each file keeps one size, as players expect).
std::filesystem::path overlay_recording_path(const std::filesystem::path& mp4_path, int64_t changes);

class OverlayOutput {
 public:
  // Validates the options and starts the live view (if any); the MP4 writer starts with the first
  // frame, when the frame size is known, and again in the next file whenever the size changes.
  static Result<std::unique_ptr<OverlayOutput>> create(OverlayOptions options);
  ~OverlayOutput();
  OverlayOutput(const OverlayOutput&) = delete;
  OverlayOutput& operator=(const OverlayOutput&) = delete;

  // Queues the frame (shared, not copied: it stays mapped until drawn) with its detections in
  // frame pixels. Returns at once (or, when lossless, once there is room). Ignored after close().
  void submit(const DecodedFrame& frame, std::vector<Detection> detections, const OverlayStats& stats);
  // Draws what is queued, finalises the MP4 and stops the live view. Idempotent; the first error
  // the output met (e.g. the encoder failed), if any.
  Status close();

  int http_port() const;             // the live view's bound port, -1 without one
  std::string encoder_name() const;  // the MP4 encoder element, empty before the first frame or without MP4
  OverlayCounters counters() const;
  Status error() const;  // the first error so far (the output stops recording after it, the live view goes on)
  // The newest drawn frame, full size; null before the first.
  std::shared_ptr<const I420Image> latest_frame() const;

 private:
  struct Item {
    DecodedFrame frame;
    std::vector<Detection> detections;
    OverlayStats stats;
  };
  explicit OverlayOutput(OverlayOptions options);
  void run();
  void render(Item& item);
  int64_t next_pts_ns(const DecodedFrame& frame);

  OverlayOptions options_;
  OverlayText text_;
  std::unique_ptr<LiveView> live_view_;
  std::unique_ptr<OverlayWriter> writer_;  // worker thread only, until joined
  std::thread worker_;

  mutable std::mutex mutex_;
  std::condition_variable has_item_, has_room_;
  std::deque<Item> queue_;
  bool closing_ = false, closed_ = false;
  OverlayCounters counters_;
  Status error_;
  std::string encoder_name_;
  std::shared_ptr<const I420Image> latest_;

  // Output timestamps (worker thread only): the stream's own, made to start at 0 and increase;
  // each file's count from its first frame's.
  int64_t first_pts_ns_ = -1, last_out_pts_ns_ = -1, file_start_pts_ns_ = 0;
};

}  // namespace edgefuse
