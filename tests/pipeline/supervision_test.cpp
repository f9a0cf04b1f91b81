// Stream supervision against a real loopback RTSP server: killed and restarted 20 times, paused
// longer than the watchdog, and a stream that never connects. Each case watches the supervisor's
// state machine (connecting, streaming, stalled, backoff) and the process's fd and thread counts.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "pipeline/daemon/stream_supervisor.h"
#include "tests/pipeline/daemon_test_support.h"
#include "tests/support/assets.h"

namespace edgefuse::test {
namespace {

using Clock = std::chrono::steady_clock;

int count_entries(const char* folder) {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder)) ++count;
  return count;
}

int open_fds() {
  return count_entries("/proc/self/fd");
}
int threads() {
  return count_entries("/proc/self/task");
}

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

TEST_CASE("an RTSP stream recovers each time its server is killed and restarted, 20 times") {
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  RtspServer server(clip);
  REQUIRE(!server.url().empty());
  Observer observer;
  SupervisorOptions options;
  options.watchdog_s = 5;
  StreamSupervisor supervisor(rtsp_options(server.url()), options, observer.on_frame(), observer.on_state());
  REQUIRE(supervisor.start().is_ok());
  REQUIRE(wait_until([&] { return supervisor.state() == StreamState::kStreaming; }, 20));
  REQUIRE(wait_until([&] { return observer.frames.load() >= 10; }, 10));
  const int baseline_fds = open_fds(), baseline_threads = threads();

  constexpr int kRestarts = 20;
  std::vector<double> recovery_s;
  for (int round = 0; round < kRestarts; ++round) {
    CAPTURE(round);
    server.kill_now();
    // A dead TCP peer is noticed at once (connection reset), not only by the watchdog.
    REQUIRE(wait_until([&] { return supervisor.state() != StreamState::kStreaming; }, 10));
    REQUIRE(server.restart());
    const auto back = Clock::now();
    const int64_t frames_before = observer.frames.load();
    REQUIRE(wait_until(
        [&] { return supervisor.state() == StreamState::kStreaming && observer.frames.load() > frames_before; }, 30));
    recovery_s.push_back(std::chrono::duration<double>(Clock::now() - back).count());
  }
  std::sort(recovery_s.begin(), recovery_s.end());
  const double p95 = recovery_s[static_cast<size_t>(0.95 * (kRestarts - 1))];
  MESSAGE("recovery after the server returns: median " << recovery_s[kRestarts / 2] << " s, p95 " << p95 << " s, max "
                                                       << recovery_s.back() << " s");
  CHECK(p95 <= 5.0);
  CHECK(supervisor.reconnects() >= kRestarts);
  CHECK(observer.count(StreamState::kStreaming) >= kRestarts + 1);
  CHECK(observer.count(StreamState::kBackoff) >= kRestarts);

  // No source left behind: the same descriptors and (within GStreamer's idle thread pool) threads.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  MESSAGE("fds " << baseline_fds << " -> " << open_fds() << ", threads " << baseline_threads << " -> " << threads());
  CHECK(open_fds() <= baseline_fds + 1);
  CHECK(threads() <= baseline_threads + 4);
  supervisor.stop();
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
  REQUIRE(wait_until([&] { return supervisor.state() == StreamState::kStreaming; }, 20));

  server.pause();
  REQUIRE(wait_until([&] { return observer.count(StreamState::kStalled) >= 1; }, 15));
  {
    const std::lock_guard lock(observer.mutex);
    const auto stalled = std::find_if(observer.changes.begin(), observer.changes.end(),
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
