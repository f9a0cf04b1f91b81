// A stream's own time in seconds, for how long objects stay in zones and in view: it follows the
// frames' presentation timestamps, so a file analysed faster than real time still measures video
// seconds, and never runs backwards. Where the timestamps start again (a file looping, a camera
// reconnected: a new pipeline counts from 0) or are missing, it advances by the frames' capture
// times instead.
#pragma once

#include <cstdint>

namespace edgefuse {

class StreamClock {
 public:
  // The next frame's time: pts_ns its presentation timestamp (< 0: none), captured_ns its capture
  // time on a steady clock. The first frame is at 0.
  double seconds(int64_t pts_ns, int64_t captured_ns);

 private:
  bool started_ = false;
  int64_t now_ns_ = 0;
  int64_t last_pts_ns_ = -1;
  int64_t last_captured_ns_ = 0;
};

}  // namespace edgefuse
