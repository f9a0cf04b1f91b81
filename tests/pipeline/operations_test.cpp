// The daemon as operated on a camera box: cameras that need credentials (which never show up in
// logs, events or reports), stalls and reconnects reported as events.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include <unistd.h>

#include "pipeline/video/stream_credentials.h"
#include "pipeline/video/video_source.h"
#include "tests/pipeline/daemon_test_support.h"
#include "tests/support/assets.h"

namespace edgefuse::test {
namespace {

std::string model_yaml(const std::filesystem::path& model) {
  return "models:\n  - name: people\n    path: " + model.string() + "\n    threads: 1\n";
}

const std::string kEventsYaml = "events:\n  path: \"@EVENTS@\"\n  empty-frames: true\nstats-interval-s: 1\n";

// "rtsp://127.0.0.1:PORT/street" -> "rtsp://<userinfo>@127.0.0.1:PORT/street"
std::string with_userinfo(const std::string& url, const std::string& userinfo) {
  return "rtsp://" + userinfo + "@" + url.substr(7);
}

void check_no_secret(const DaemonRun& run, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    CAPTURE(secret);
    CHECK(run.log.find(secret) == std::string::npos);
    CHECK(run.events_text.find(secret) == std::string::npos);
    for (const StreamReport& report : run.reports) {
      CHECK(report.error.find(secret) == std::string::npos);
      CHECK(report.name.find(secret) == std::string::npos);
    }
  }
}

TEST_CASE("cameras behind credentials stream, and the credentials appear nowhere") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  const std::string user = "ops.cam.user";
  const std::string password = "p@ss:w0rd/%1";
  RtspServer server(clip, {.user = user, .password = password});
  REQUIRE(!server.url().empty());
  const std::vector<std::string> secrets = {password, percent_encode(password), user + ":"};

  struct Case {
    const char* name;
    std::string uri, keys;
  };
  setenv("EDGEFUSE_TEST_CAMERA_PASSWORD", password.c_str(), 1);
  const std::vector<Case> cases = {
      {"percent-encoded in the uri", with_userinfo(server.url(), user + ":" + percent_encode(password)), ""},
      {"written plainly in the uri", with_userinfo(server.url(), user + ":" + password), ""},
      {"from the environment", server.url(),
       "    username: " + user + "\n    password-env: EDGEFUSE_TEST_CAMERA_PASSWORD\n"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const int port = free_loopback_port();
    std::string http_text, streams_json;
    const DaemonRun run = run_daemon(model_yaml(model) + "streams:\n  - name: camera\n    uri: \"" + c.uri +
                                         "\"\n    model: people\n    inference-interval: 15\n" + c.keys + kEventsYaml +
                                         "http:\n  port: " + std::to_string(port) + "\n",
                                     4.0, [&](Daemon&) {
                                       std::this_thread::sleep_for(std::chrono::seconds(2));
                                       for (const char* path : {"/metrics", "/readyz", "/healthz", "/nope"}) {
                                         http_text += http_get(port, path).body;
                                       }
                                       streams_json = http_get(port, "/streams").body;
                                       http_text += streams_json;
                                     });
    REQUIRE(run.status.is_ok());
    // /streams: the stream's state and figures as JSON, its uri without the credentials.
    const nlohmann::json streams = nlohmann::json::parse(streams_json, nullptr, false);
    REQUIRE_MESSAGE(streams.contains("streams"), streams_json);
    REQUIRE(streams.at("streams").size() == 1);
    const nlohmann::json& camera = streams.at("streams")[0];
    CHECK(camera.at("name") == "camera");
    CHECK(camera.at("state") == "streaming");
    CHECK(camera.at("uri").get<std::string>().find('@') == std::string::npos);
    CHECK(camera.at("frames_in").get<int64_t>() > 0);
    CHECK(camera.at("processed").get<int64_t>() <= camera.at("frames_in").get<int64_t>());
    CHECK(camera.at("events").get<int64_t>() <= camera.at("processed").get<int64_t>());
    CHECK(camera.at("fps").get<double>() > 0);
    CHECK(camera.at("detections_dropped") == nlohmann::json({{"score", 0}, {"area", 0}, {"ratio", 0}, {"mask", 0}}));
    CHECK(http_text.find("edgefuse_stream_frames_total{stream=\"camera\"}") != std::string::npos);
    CHECK(http_text.find("edgefuse_stream_tracks{stream=\"camera\"}") != std::string::npos);
    CHECK(http_text.find("edgefuse_stream_tracks_started_total{stream=\"camera\"}") != std::string::npos);
    for (const std::string& secret : secrets) CHECK(http_text.find(secret) == std::string::npos);
    CHECK(run.report("camera").frames_in > 0);  // authenticated: video arrived
    CHECK(!run.events.empty());
    check_no_secret(run, secrets);
  }
  unsetenv("EDGEFUSE_TEST_CAMERA_PASSWORD");

  // A wrong password: the camera refuses, the stream fails with the reason, and neither password leaks.
  const std::string wrong = "Wr0ng/p@ss%word";
  const DaemonRun refused = run_daemon(model_yaml(model) + "streams:\n  - name: camera\n    uri: \"" +
                                           with_userinfo(server.url(), user + ":" + percent_encode(wrong)) +
                                           "\"\n    model: people\n    reconnect: false\n" + kEventsYaml,
                                       10.0);
  REQUIRE(refused.status.is_ok());
  CHECK(refused.report("camera").frames_in == 0);
  CHECK(refused.report("camera").state == "failed");
  CHECK(!refused.report("camera").error.empty());
  std::vector<std::string> all = secrets;
  all.push_back(wrong);
  all.push_back(percent_encode(wrong));
  check_no_secret(refused, all);
}

// The value of one sample line of a /metrics page, or -1 when absent.
double metric(const std::string& page, const std::string& series) {
  const size_t at = page.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::stod(page.substr(at + series.size() + 2));
}

int count_entries(const char* folder) {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder)) ++count;
  return count;
}

StreamReport report_of(Daemon& daemon, const std::string& name) {
  for (StreamReport& report : daemon.reports()) {
    if (report.name == name) return report;
  }
  return {};
}

// Polls until `done` or the deadline; true when done.
template <typename Predicate>
bool wait_until(Predicate done, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

TEST_CASE("the daemon's camera stream recovers each time its RTSP server is killed and restarted, 20 times") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  RtspServer server(clip);
  REQUIRE(!server.url().empty());
  constexpr int kRestarts = 20;
  std::vector<double> recovery_s;
  int baseline_fds = 0, baseline_threads = 0, final_fds = 0, final_threads = 0;
  bool all_recovered = true;
  const DaemonRun run = run_daemon(
      model_yaml(model) + "streams:\n  - name: camera\n    uri: " + server.url() +
          "\n    model: people\n    inference-interval: 30\n    watchdog-s: 5\n" + kEventsYaml,
      std::nullopt,
      [&](Daemon& daemon) {
        auto streaming_with_frames = [&](int64_t after) {
          const StreamReport report = report_of(daemon, "camera");
          return report.state == "streaming" && report.frames_in > after;
        };
        // (No REQUIRE on this thread: a throw here would end the process.)
        all_recovered = wait_until([&] { return streaming_with_frames(10); }, 30);
        baseline_fds = count_entries("/proc/self/fd");
        baseline_threads = count_entries("/proc/self/task");
        for (int round = 0; round < kRestarts && all_recovered; ++round) {
          server.kill_now();
          // A dead TCP peer is noticed at once (connection reset), not only by the watchdog.
          all_recovered = wait_until([&] { return report_of(daemon, "camera").state != "streaming"; }, 10);
          all_recovered = all_recovered && server.restart();
          const auto back = std::chrono::steady_clock::now();
          const int64_t frames_before = report_of(daemon, "camera").frames_in;
          all_recovered = all_recovered && wait_until([&] { return streaming_with_frames(frames_before); }, 30);
          recovery_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - back).count());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        final_fds = count_entries("/proc/self/fd");
        final_threads = count_entries("/proc/self/task");
      },
      /*stop_after_during=*/true);
  REQUIRE(run.status.is_ok());
  REQUIRE(all_recovered);
  REQUIRE(recovery_s.size() == static_cast<size_t>(kRestarts));
  std::sort(recovery_s.begin(), recovery_s.end());
  const double p95 = recovery_s[static_cast<size_t>(0.95 * (kRestarts - 1))];
  MESSAGE("streaming again after the server returns: median " << recovery_s[kRestarts / 2] << " s, p95 " << p95
                                                              << " s, max " << recovery_s.back() << " s");
  MESSAGE("fds " << baseline_fds << " -> " << final_fds << ", threads " << baseline_threads << " -> " << final_threads);
  CHECK(p95 <= 5.0);
  // One pipeline per stream, torn down completely each time: descriptors back to the baseline,
  // threads within GStreamer's idle pool.
  CHECK(final_fds <= baseline_fds + 1);
  CHECK(final_threads <= baseline_threads + 4);
  CHECK(run.report("camera").reconnects >= kRestarts);
  int streaming_events = 0;
  for (const nlohmann::json& event : run.state_events) streaming_events += event.at("state") == "streaming";
  CHECK(streaming_events >= kRestarts + 1);
  CHECK(!run.events.empty());
}

TEST_CASE("a stalled camera is reported in events and metrics, and is streaming again after it recovers") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(clip, "data/vtest_1080p30.mp4");
  RtspServer server(clip);
  REQUIRE(!server.url().empty());
  const int port = free_loopback_port();
  HttpReply ready_before, ready_paused, ready_after, health_paused;
  double stalls_paused = -1, streaming_paused = -1, streaming_after = -1;
  const DaemonRun run =
      run_daemon(model_yaml(model) + "streams:\n  - name: camera\n    uri: " + server.url() +
                     "\n    model: people\n    inference-interval: 15\n    watchdog-s: 1.5\n" + kEventsYaml +
                     "http:\n  port: " + std::to_string(port) + "\n",
                 14.0, [&](Daemon&) {
                   std::this_thread::sleep_for(std::chrono::seconds(3));
                   ready_before = http_get(port, "/readyz");
                   server.pause();
                   std::this_thread::sleep_for(std::chrono::seconds(4));
                   ready_paused = http_get(port, "/readyz");
                   health_paused = http_get(port, "/healthz");
                   const std::string page = http_get(port, "/metrics").body;
                   stalls_paused = metric(page, "edgefuse_stream_stalls_total{stream=\"camera\"}");
                   streaming_paused = metric(page, "edgefuse_stream_state{stream=\"camera\",state=\"streaming\"}");
                   server.resume();
                   for (int i = 0; i < 80 && streaming_after != 1; ++i) {
                     std::this_thread::sleep_for(std::chrono::milliseconds(100));
                     streaming_after = metric(http_get(port, "/metrics").body,
                                              "edgefuse_stream_state{stream=\"camera\",state=\"streaming\"}");
                   }
                   ready_after = http_get(port, "/readyz");
                 });
  REQUIRE(run.status.is_ok());
  CHECK(ready_before.status == 200);
  CHECK(ready_paused.status == 503);
  CHECK(ready_paused.body.find("camera is") != std::string::npos);
  CHECK(health_paused.status == 200);  // the daemon itself is fine: liveness does not flap with a camera
  CHECK(stalls_paused >= 1);
  CHECK(streaming_paused == 0);
  CHECK(streaming_after == 1);
  CHECK(ready_after.status == 200);

  std::vector<std::string> states;
  for (const nlohmann::json& event : run.state_events) {
    CHECK(event.at("stream") == "camera");
    CHECK(!event.at("id").get<std::string>().empty());
    states.push_back(event.at("state"));
  }
  const auto stalled = std::find(states.begin(), states.end(), "stalled");
  REQUIRE(stalled != states.end());
  CHECK(std::find(stalled, states.end(), "backoff") != states.end());
  CHECK(std::find(stalled, states.end(), "streaming") != states.end());  // recovered after SIGCONT
  CHECK(run.report("camera").reconnects >= 1);
  // Frame numbers keep counting across the reconnect, so events never repeat a frame number.
  std::set<int64_t> frames;
  for (const nlohmann::json& event : run.events) CHECK(frames.insert(event.at("frame").get<int64_t>()).second);
}

}  // namespace
}  // namespace edgefuse::test

namespace edgefuse::test {
namespace {

std::string pattern_stream(const std::string& name, int interval) {
  return "  - name: " + name + "\n    uri: test://ball\n    model: people\n    width: 320\n    height: 240\n" +
         "    inference-interval: " + std::to_string(interval) + "\n";
}

int64_t frames_in(Daemon& daemon, const std::string& name) {
  for (const StreamReport& report : daemon.reports()) {
    if (report.name == name) return report.frames_in;
  }
  return -1;
}

TEST_CASE("a reload asked of a daemon that is not running is answered at once, not left waiting") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  Result<DaemonConfig> config = parse_config(model_yaml(model) + "streams:\n" + pattern_stream("idle", 30),
                                             std::filesystem::temp_directory_path(), "idle.yaml");
  REQUIRE_MESSAGE(config.is_ok(), config.status().to_string());
  Result<std::unique_ptr<Daemon>> daemon = Daemon::create(*config);
  REQUIRE_MESSAGE(daemon.is_ok(), daemon.status().to_string());
  std::future<Status> answer = (*daemon)->request_reload(*config);
  REQUIRE(answer.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  const Status status = answer.get();
  CHECK_FALSE(status.is_ok());
  CHECK(status.message().find("not running") != std::string::npos);
}

TEST_CASE("a reload restarts only what changed, and a bad config is rejected while the old one runs") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  const std::string events = "events:\n  path: \"@EVENTS@\"\nstats-interval-s: 0\n";
  const std::string before = model_yaml(model) + "streams:\n" + pattern_stream("kept", 30) +
                             pattern_stream("changed", 30) + pattern_stream("removed", 30) + events;
  const std::string after = model_yaml(model) + "streams:\n" + pattern_stream("kept", 30) +
                            pattern_stream("changed", 31) + pattern_stream("added", 30) + events;
  const std::filesystem::path garbage = std::filesystem::temp_directory_path() / "edgefuse_reload_garbage.onnx";
  std::ofstream(garbage) << "not an onnx model";
  Status good_reload, bad_reload;
  int64_t kept_before = 0, kept_after = 0, kept_later = 0, changed_before = 0, changed_after = 0;
  std::vector<std::string> names_after;
  // Stopped once both reloads are answered (at most after 300 s): a fixed run time could end before
  // the second on a slow machine (loading a model under sanitizers takes seconds).
  const auto reloads = [&](Daemon& daemon) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    kept_before = frames_in(daemon, "kept");
    changed_before = frames_in(daemon, "changed");
    Result<DaemonConfig> next = parse_config(after, std::filesystem::temp_directory_path(), "after.yaml");
    CHECK(next.is_ok());  // no REQUIRE on this thread: a throw here would end the process
    if (!next.is_ok()) return;
    good_reload = daemon.request_reload(*next).get();
    kept_after = frames_in(daemon, "kept");
    changed_after = frames_in(daemon, "changed");
    for (const StreamReport& report : daemon.reports()) names_after.push_back(report.name);

    std::string broken = after;
    broken.replace(broken.find(model.string()), model.string().size(), garbage.string());
    Result<DaemonConfig> bad = parse_config(broken, std::filesystem::temp_directory_path(), "broken.yaml");
    CHECK(bad.is_ok());  // it parses; the model fails to load
    if (!bad.is_ok()) return;
    bad_reload = daemon.request_reload(*bad).get();
    std::this_thread::sleep_for(std::chrono::seconds(2));
    kept_later = frames_in(daemon, "kept");
  };
  const DaemonRun run = run_daemon(before, 300.0, reloads, /*stop_after_during=*/true);
  std::filesystem::remove(garbage);
  REQUIRE(run.status.is_ok());
  CHECK(good_reload.is_ok());
  CHECK(kept_before > 0);
  CHECK(kept_after >= kept_before);       // the same stream object kept counting
  CHECK(changed_after < changed_before);  // rebuilt: its counts started again
  CHECK(std::find(names_after.begin(), names_after.end(), "added") != names_after.end());
  CHECK(std::find(names_after.begin(), names_after.end(), "removed") == names_after.end());
  CHECK(!bad_reload.is_ok());
  CHECK(bad_reload.message().find("edgefuse_reload_garbage.onnx") != std::string::npos);
  CHECK(kept_later > kept_after);  // still running on the old configuration
  CHECK(run.log.find("reload applied: streams restarted: changed; added: added; removed: removed") !=
        std::string::npos);
  // "kept" connected once: no second streaming state event for it.
  int kept_streaming = 0;
  for (const nlohmann::json& event : run.state_events) {
    kept_streaming += event.at("stream") == "kept" && event.at("state") == "streaming";
  }
  CHECK(kept_streaming == 1);
}

}  // namespace
}  // namespace edgefuse::test

namespace edgefuse::test {
namespace {

TEST_CASE("a stream's overlay from the config: an MP4 of its processed frames and a live view") {
  ASSET_OR_SKIP(model, "models/yolox_nano.onnx");
  const std::filesystem::path mp4 =
      std::filesystem::temp_directory_path() / ("edgefuse_daemon_overlay_" + std::to_string(getpid()) + ".mp4");
  const int port = free_loopback_port();
  HttpReply page;
  const DaemonRun run = run_daemon(
      model_yaml(model) + "streams:\n" + pattern_stream("pattern", 2) + "    overlay-file: " + mp4.string() +
          "\n    overlay-port: " + std::to_string(port) + "\nevents:\n  path: \"@EVENTS@\"\nstats-interval-s: 0\n",
      4.0, [&](Daemon&) {
        std::this_thread::sleep_for(std::chrono::seconds(2));
        page = http_get(port, "/");
      });
  REQUIRE(run.status.is_ok());
  CHECK(page.status == 200);
  CHECK(page.body.find("<img") != std::string::npos);
  CHECK(run.log.find("overlay drew") != std::string::npos);
  // The recording decodes: processed frames at the stream's size.
  int64_t frames = 0;
  int width = 0, height = 0;
  VideoSourceOptions options;
  options.name = "recording";
  options.address = {SourceKind::kFile, mp4.string()};
  options.pipeline.realtime = false;
  Result<std::unique_ptr<VideoSource>> recording = VideoSource::create(options, [&](DecodedFrame frame) {
    ++frames;
    width = frame.width();
    height = frame.height();
  });
  REQUIRE(recording.is_ok());
  REQUIRE((*recording)->start().is_ok());
  while (!(*recording)->done()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  (*recording)->stop();
  std::filesystem::remove(mp4);
  MESSAGE("overlay MP4: " << frames << " frames, processed " << run.report("pattern").processed);
  CHECK((*recording)->error().empty());
  CHECK(frames >= run.report("pattern").processed / 2);
  CHECK(frames > 0);
  CHECK(width == 320);
  CHECK(height == 240);
}

}  // namespace
}  // namespace edgefuse::test
