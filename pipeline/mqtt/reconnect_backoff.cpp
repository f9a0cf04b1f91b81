// The reconnection schedule with jitter.
#include "pipeline/mqtt/reconnect_backoff.h"

#include <algorithm>
#include <array>

namespace edgefuse {
namespace {

constexpr std::array<int, 5> kScheduleSeconds = {1, 2, 5, 10, 30};

}  // namespace

ReconnectBackoff::ReconnectBackoff(unsigned seed) : random_(seed) {}

std::chrono::milliseconds ReconnectBackoff::next_delay() {
  const int step = std::min<int>(failures_, static_cast<int>(kScheduleSeconds.size()) - 1);
  ++failures_;
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  return std::chrono::milliseconds(static_cast<int64_t>(kScheduleSeconds[step] * 1000.0 * jitter(random_)));
}

}  // namespace edgefuse
