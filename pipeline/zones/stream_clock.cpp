#include "pipeline/zones/stream_clock.h"

#include <algorithm>

namespace edgefuse {

double StreamClock::seconds(int64_t pts_ns, int64_t captured_ns) {
  if (started_) {
    const bool pts_continues = pts_ns >= 0 && last_pts_ns_ >= 0 && pts_ns >= last_pts_ns_;
    now_ns_ += pts_continues ? pts_ns - last_pts_ns_ : std::max<int64_t>(0, captured_ns - last_captured_ns_);
  }
  // A capture time out of order neither counts nor moves the reference back (which would count
  // the same interval twice).
  last_captured_ns_ = started_ ? std::max(last_captured_ns_, captured_ns) : captured_ns;
  started_ = true;
  last_pts_ns_ = pts_ns;
  return static_cast<double>(now_ns_) / 1e9;
}

}  // namespace edgefuse
