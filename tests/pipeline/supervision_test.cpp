// Stream supervision against a real loopback RTSP server: paused longer than the watchdog, and a
// stream that never connects. Each case watches the supervisor's state machine (connecting,
// streaming, stalled, backoff). The daemon-level tests (operations_test.cpp) kill and restart the
// server 20 times.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/daemon/stream_supervisor.h"
#include "tests/pipeline/daemon_test_support.h"
#include "tests/support/assets.h"

namespace edgefuse::test {
namespace {

using Clock = std::chrono::steady_clock;

// Frames and state changes as the supervisor reports them.
struct Observer {
  std::mutex mutex;
  std::vector<StateChange> changes;
  std::atomic<int64_t> frames{0};

  StreamSupervisor::FrameCallback on_frame() {
    return [this](DecodedFrame) { frames.fetch_add(1); };
  }
  StreamSupervisor::StateCallback on_state() {
    return [this](const StateChange& change) {
      const std::lock_guard lock(mutex);
      changes.push_back(change);
    };
  }
  int count(StreamState state) {
    const std::lock_guard lock(mutex);
    return static_cast<int>(
        std::count_if(changes.begin(), changes.end(), [&](const StateChange& change) { return change.to == state; }));
  }
  // "connecting -> streaming (first frame decoded); ...": what a failed check prints.
  std::string history() {
    const std::lock_guard lock(mutex);
    std::string text;
    for (const StateChange& change : changes) {
      text += std::string(stream_state_name(change.from)) + " -> " + stream_state_name(change.to) + " (" +
              change.reason + "); ";
    }
    return text + std::to_string(frames.load()) + " frames";
  }
};

// Polls until `done` or the deadline; true when done.
template <typename Predicate>
bool wait_until(Predicate done, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

VideoSourceOptions rtsp_options(const std::string& url) {
  VideoSourceOptions options;
  options.name = "camera";
  options.address = {SourceKind::kRtsp, url};
  options.pipeline.rtsp_over_tcp = true;
  return options;
}

TEST_CASE("a paused server stalls the stream past the watchdog; it recovers after SIGCONT") {
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  RtspServer server(clip);
  REQUIRE(!server.url().empty());
  Observer observer;
  SupervisorOptions options;
  options.watchdog_s = 2;
  StreamSupervisor supervisor(rtsp_options(server.url()), options, observer.on_frame(), observer.on_state());
  REQUIRE(supervisor.start().is_ok());
  INFO("state changes: ", observer.history());
  REQUIRE(wait_until([&] { return supervisor.state() == StreamState::kStreaming; }, 20));

  // Under load the first attempt may already have stalled before its first frame (the watchdog
  // counts from each attempt's start): the stall to wait for is the one after the pause.
  const int stalls_before = observer.count(StreamState::kStalled);
  server.pause();
  REQUIRE(wait_until([&] { return observer.count(StreamState::kStalled) > stalls_before; }, 15));
  {
    const std::lock_guard lock(observer.mutex);
    const auto stalled = std::find_if(observer.changes.rbegin(), observer.changes.rend(),
                                      [](const StateChange& c) { return c.to == StreamState::kStalled; });
    CHECK(stalled->reason.find("no frame decoded for") != std::string::npos);
  }
  // Still paused: attempts fail or stall again, and the stream is not reported as streaming.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  CHECK(supervisor.state() != StreamState::kStreaming);

  server.resume();
  const int64_t frames_before = observer.frames.load();
  CHECK(wait_until(
      [&] { return supervisor.state() == StreamState::kStreaming && observer.frames.load() > frames_before; }, 30));
  supervisor.stop();
}

TEST_CASE("a camera that is never there backs off with growing delays and stops cleanly") {
  Observer observer;
  SupervisorOptions options;
  options.backoff_s = {0.2, 0.4, 0.8};
  options.jitter = 0;
  StreamSupervisor supervisor(rtsp_options("rtsp://127.0.0.1:9/none"), options, observer.on_frame(),
                              observer.on_state());
  REQUIRE(supervisor.start().is_ok());
  REQUIRE(wait_until([&] { return observer.count(StreamState::kBackoff) >= 4; }, 20));
  {
    const std::lock_guard lock(observer.mutex);
    std::vector<double> delays;
    for (const StateChange& change : observer.changes) {
      if (change.to == StreamState::kBackoff) delays.push_back(change.delay_s);
    }
    CHECK(delays[0] == doctest::Approx(0.2));
    CHECK(delays[1] == doctest::Approx(0.4));
    CHECK(delays[2] == doctest::Approx(0.8));
    CHECK(delays[3] == doctest::Approx(0.8));  // the last delay repeats
  }
  CHECK(observer.frames.load() == 0);
  CHECK(!supervisor.last_error().empty());
  const auto stop_begin = Clock::now();
  supervisor.stop();
  CHECK(std::chrono::duration<double>(Clock::now() - stop_begin).count() < 3.0);
}

}  // namespace
}  // namespace edgefuse::test
