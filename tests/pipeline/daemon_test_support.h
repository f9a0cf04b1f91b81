// Shared by the daemon tests: run a daemon on YAML text, read back its events, decode reference
// frames, and start the loopback RTSP server.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <opencv2/core/mat.hpp>

#include "pipeline/daemon/daemon.h"
#include "tests/support/loopback.h"

namespace edgefuse::test {

struct DaemonRun {
  Status status;
  std::vector<StreamReport> reports;
  std::vector<nlohmann::json> events;        // detection events, in file order
  std::vector<nlohmann::json> state_events;  // stream state changes, in file order
  // Track events (events.tracks), in file order, each given "after_frame": the frame of the
  // detection event written last before it (-1: none).
  std::vector<nlohmann::json> track_events;
  std::string events_text;  // the events file as written
  std::string log;          // what the daemon wrote on stderr (also passed through)
  std::string metrics;      // its /metrics page once the run ended
  nlohmann::json streams;   // and its /streams document

  const StreamReport& report(const std::string& stream) const;
  std::vector<nlohmann::json> events_of(const std::string& stream) const;
};

// Writes `yaml` (where "@EVENTS@" stands for the events file) to a fresh folder and runs the
// daemon on it until every stream ends or `duration_s` passes. `during` runs on another thread
// while the daemon runs (e.g. to query its HTTP endpoints), given the daemon; with
// `stop_after_during` the daemon is stopped (and drained) when it returns.
DaemonRun run_daemon(const std::string& yaml, std::optional<double> duration_s = std::nullopt,
                     const std::function<void(Daemon&)>& during = {}, bool stop_after_during = false);

// An MPEG-TS file of the clip's first `frames` frames scaled to each of `sizes` in turn, one after
// the other (H.264, a keyframe each second): a stream whose resolution changes mid-way, as a
// camera's does when it switches profiles. Fails the test when GStreamer cannot write it.
struct FrameSize {
  int width = 0, height = 0;
};
void write_clip_in_sizes(const std::filesystem::path& clip, const std::filesystem::path& out, int frames,
                         const std::vector<FrameSize>& sizes);

// BGR images (OpenCV's conversion of the decoded planes) of the given frames of a clip.
std::map<int64_t, cv::Mat> decode_frames_bgr(const std::filesystem::path& clip, const std::vector<int64_t>& numbers);

struct HttpReply {
  int status = 0;  // 0: no answer
  std::string body;
};
// GET http://127.0.0.1:PORT/PATH with a 5 s timeout (a plain socket: the test checks the server,
// not a client library).
HttpReply http_get(int port, const std::string& path);

struct RtspServerOptions {
  int port = 0;                // 0: a free port, kept across restart()
  std::string user, password;  // when set, clients must authenticate (RTSP basic)
};

// A running rtsp_test_server; killed when this goes out of scope.
class RtspServer {
 public:
  explicit RtspServer(const std::filesystem::path& clip, RtspServerOptions options = {});
  ~RtspServer();
  RtspServer(const RtspServer&) = delete;
  RtspServer& operator=(const RtspServer&) = delete;
  const std::string& url() const { return url_; }  // empty when it failed to start
  int port() const { return options_.port; }

  void kill_now();  // SIGKILL, as a crashing camera or a pulled cable
  bool restart();   // starts it again on the same port; false when it could not listen
  void pause();     // SIGSTOP: the TCP connection stays up but nothing arrives
  void resume();    // SIGCONT

 private:
  bool launch();
  std::filesystem::path clip_;
  RtspServerOptions options_;
  int pid_ = -1;
  std::string url_;
};

}  // namespace edgefuse::test
