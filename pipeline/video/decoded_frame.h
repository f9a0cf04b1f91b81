// One decoded video frame as the decoder produced it (NV12 or I420 in system memory), held
// without a copy: the frame keeps the GStreamer buffer mapped until the last owner lets go.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

namespace edgefuse {

enum class FramePixelFormat { kNV12, kI420 };

struct FramePlanes {
  const uint8_t* data[3] = {nullptr, nullptr, nullptr};  // NV12: Y, interleaved UV; I420: Y, U, V
  int stride[3] = {0, 0, 0};
};

class DecodedFrame {
 public:
  using Clock = std::chrono::steady_clock;

  // Implemented by the GStreamer side: owns the sample and its mapping.
  class Holder {
   public:
    virtual ~Holder() = default;
  };

  DecodedFrame(std::shared_ptr<const Holder> holder, FramePixelFormat format, int width, int height, FramePlanes planes)
      : holder_(std::move(holder)), format_(format), width_(width), height_(height), planes_(planes) {}

  FramePixelFormat format() const { return format_; }
  int width() const { return width_; }
  int height() const { return height_; }
  const FramePlanes& planes() const { return planes_; }

  int64_t number = 0;             // 0-based count of frames this source has decoded (across loops)
  int64_t pts_ns = -1;            // stream timestamp, -1 when the stream gave none
  Clock::time_point captured_at;  // the frame's capture (live) or presentation (file) time, on our clock
  bool bt709 = false;             // colour matrix from the caps: BT.709 (HD) or else BT.601

 private:
  std::shared_ptr<const Holder> holder_;
  FramePixelFormat format_;
  int width_, height_;
  FramePlanes planes_;
};

}  // namespace edgefuse
