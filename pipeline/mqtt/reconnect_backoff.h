// ReconnectBackoff: the wait before each reconnection attempt, 1, 2, 5, 10, then 30 s for every
// further failure, each scaled by a random factor in [0.8, 1.2] so that many devices cut off by
// the same broker outage do not come back in lockstep.
#pragma once

#include <chrono>
#include <random>

namespace edgefuse {

class ReconnectBackoff {
 public:
  explicit ReconnectBackoff(unsigned seed = std::random_device{}());
  // The wait before the next attempt; each call moves one step up the schedule.
  std::chrono::milliseconds next_delay();
  // After a successful connection: the next failure waits the first step again.
  void reset() { failures_ = 0; }

 private:
  int failures_ = 0;
  std::mt19937 random_;
};

}  // namespace edgefuse
