// Records overlay frames to an H.264 MP4 file with GStreamer:
//   appsrc ! videoconvert ! ENCODER ! h264parse ! mp4mux ! filesink
// The encoder is the first of nvv4l2h264enc (Jetson), vah264enc / vaapih264enc (Intel/AMD),
// v4l2h264enc (Raspberry Pi and other V4L2 codecs), x264enc, openh264enc that is installed and
// accepts the pipeline, unless one is named. close() sends end-of-stream and waits for mp4mux to
// write the index; a file that was not closed is not playable.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "pipeline/overlay/i420_image.h"
#include "runtime/status.h"

namespace edgefuse {

struct OverlayWriterOptions {
  std::filesystem::path path;
  int width = 0, height = 0;
  double fps = 30;               // nominal rate, in the caps; buffers carry their own timestamps
  std::string encoder = "auto";  // "auto" or an element name from the list above
  int bitrate_kbps = 0;          // 0: about 0.1 bit per pixel per frame (6 Mbit/s at 1080p30)
  bool bt709 = false;
};

class OverlayWriter {
 public:
  static Result<std::unique_ptr<OverlayWriter>> create(const OverlayWriterOptions& options);
  ~OverlayWriter();
  OverlayWriter(const OverlayWriter&) = delete;
  OverlayWriter& operator=(const OverlayWriter&) = delete;

  // Queues the image for encoding without copying it (the buffer holds `image` until encoded).
  // Blocks while the encoder is a few frames behind. `pts_ns` counts from 0 and must increase.
  Status write(std::shared_ptr<const I420Image> image, int64_t pts_ns);
  // End of stream, then waits (up to 30 s) for the file to be finalised. Idempotent.
  Status close();

  const std::string& encoder_name() const { return encoder_name_; }
  int64_t frames_written() const { return frames_written_; }
  int width() const { return options_.width; }
  int height() const { return options_.height; }

 private:
  struct Pipeline;
  OverlayWriter() = default;
  Status bus_error();

  std::unique_ptr<Pipeline> pipeline_;
  OverlayWriterOptions options_;
  std::string encoder_name_;
  int64_t frames_written_ = 0;
  bool closed_ = false;
};

}  // namespace edgefuse
