#include "pipeline/zones/stream_clock.h"

#include <doctest/doctest.h>

using namespace edgefuse;

namespace {
constexpr int64_t kMs = 1'000'000;
}

TEST_CASE("stream clock: follows the timestamps, not how fast the frames come") {
  StreamClock clock;
  // A file decoded faster than real time: 100 ms of video every 10 ms.
  CHECK(clock.seconds(500 * kMs, 0) == 0);
  CHECK(clock.seconds(600 * kMs, 10 * kMs) == doctest::Approx(0.1));
  CHECK(clock.seconds(700 * kMs, 20 * kMs) == doctest::Approx(0.2));
}

TEST_CASE("stream clock: timestamps starting again (a loop, a reconnect) advance by capture time") {
  StreamClock clock;
  clock.seconds(9'900 * kMs, 0);
  CHECK(clock.seconds(10'000 * kMs, 100 * kMs) == doctest::Approx(0.1));
  CHECK(clock.seconds(0, 150 * kMs) == doctest::Approx(0.15));  // the loop restarts at pts 0
  CHECK(clock.seconds(100 * kMs, 400 * kMs) == doctest::Approx(0.25));
}

TEST_CASE("stream clock: without timestamps, capture time; it never runs backwards") {
  StreamClock clock;
  CHECK(clock.seconds(-1, 1'000 * kMs) == 0);
  CHECK(clock.seconds(-1, 1'300 * kMs) == doctest::Approx(0.3));
  CHECK(clock.seconds(-1, 1'200 * kMs) == doctest::Approx(0.3));  // a capture time out of order
  CHECK(clock.seconds(-1, 1'400 * kMs) == doctest::Approx(0.4));  // 1.3 s -> 1.4 s counted once
}
