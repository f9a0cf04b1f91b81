// Motion-gated detection: skip inference on frames where nothing moved since the model last looked,
// the saving that lets a camera box watching quiet scenes serve more streams.
//
// A frame's luma is reduced to the means of 8 x 8 pixel blocks (every other row sampled: averaging
// sensor noise away at half a pass over the plane); a block has changed when its mean differs from the
// reference's by at least `block_delta` levels. The frame moves when at least `min_area_percent` of
// its blocks changed. The reference is the last frame let through, so slow motion adds up until it
// counts rather than hiding below a frame-to-frame threshold. A frame is also let through when
// `refresh_s` has passed since the last one (objects standing still are looked at now and then),
// and when the frame size changed.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "pipeline/video/decoded_frame.h"

namespace edgefuse {

struct MotionGateOptions {
  double min_area_percent = 0.1;  // of the picture's blocks, (0, 100]
  int block_delta = 12;           // luma levels, 1..255
  double refresh_s = 10;          // 0: never refresh
};

class MotionGate {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kBlock = 8;  // pixels per block side

  explicit MotionGate(MotionGateOptions options = {}) : options_(options) {}

  // Whether `frame` (decoded at `now`) goes to the model; if so it becomes the reference.
  bool let_through(const DecodedFrame& frame, Clock::time_point now);

  // Percent of blocks that changed against the reference on the last frame judged (0 on a frame
  // let through without comparing).
  double last_changed_percent() const { return last_changed_percent_; }

 private:
  // Block means of the frame's luma: (width / kBlock) x (height / kBlock), partial blocks left out.
  void block_means(const DecodedFrame& frame, std::vector<uint8_t>& out) const;

  MotionGateOptions options_;
  std::vector<uint8_t> reference_, current_;
  int reference_width_ = 0, reference_height_ = 0;
  Clock::time_point reference_time_{};
  double last_changed_percent_ = 0;
};

}  // namespace edgefuse
