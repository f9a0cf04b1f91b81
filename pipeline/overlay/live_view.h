// The live view: an HTTP server on a loopback address that serves
//   /             a small HTML page showing the stream
//   /stream.mjpg  the overlay as MJPEG (multipart/x-mixed-replace), which browsers show in an <img>
//   /snapshot.jpg the latest frame as one JPEG
// Frames are published as full-size canvases; a thread of its own downscales them to the preview
// width and encodes JPEG at most max_fps times a second, and only while someone is watching, so the
// pipeline never waits for a browser.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/overlay/i420_image.h"
#include "runtime/status.h"

namespace edgefuse {

struct LiveViewOptions {
  std::string bind_address = "127.0.0.1";
  int port = 0;  // 0: any free port (see LiveView::port())
  int preview_width = 960;
  double max_fps = 10;
  int jpeg_quality = 80;
  std::string title = "edgefuse overlay";
};

class LiveView {
 public:
  // Binds the port and starts serving; errors: the address or port cannot be bound.
  static Result<std::unique_ptr<LiveView>> create(LiveViewOptions options);
  ~LiveView();
  LiveView(const LiveView&) = delete;
  LiveView& operator=(const LiveView&) = delete;

  // Offers the newest frame; never blocks on encoding or on clients (the latest frame wins).
  void publish(std::shared_ptr<const I420Image> frame);
  // Stops serving and joins its threads; open streams end. Idempotent.
  void stop();

  int port() const { return port_; }
  int64_t jpegs_encoded() const { return jpegs_encoded_.load(); }
  int viewers() const { return viewers_.load(); }

 private:
  struct Server;
  explicit LiveView(LiveViewOptions options);
  void encode_loop();
  bool server_stopping();
  // The JPEG of the newest frame, encoded on the caller's thread; null before the first frame.
  std::shared_ptr<const std::vector<uint8_t>> snapshot();
  // Waits (up to `wait_ms`) for a JPEG newer than `after`; returns it and its generation, or null.
  std::shared_ptr<const std::vector<uint8_t>> wait_jpeg(uint64_t after, int wait_ms, uint64_t& generation);

  LiveViewOptions options_;
  std::unique_ptr<Server> server_;
  std::thread server_thread_, encoder_thread_;
  int port_ = -1;

  std::mutex mutex_;
  std::condition_variable frame_ready_, jpeg_ready_;
  std::shared_ptr<const I420Image> latest_;   // newest frame published
  std::shared_ptr<const I420Image> pending_;  // newest frame not yet encoded for the stream
  std::shared_ptr<const std::vector<uint8_t>> jpeg_;
  uint64_t jpeg_generation_ = 0;
  bool stopping_ = false;
  std::atomic<int> viewers_{0};
  std::atomic<int64_t> jpegs_encoded_{0};
};

}  // namespace edgefuse
