// Shared by the daemon tests: run a daemon on YAML text, read back its events, decode reference
// frames, and start the loopback RTSP server.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <opencv2/core/mat.hpp>

#include "pipeline/daemon/daemon.h"

namespace edgefuse::test {

struct DaemonRun {
  Status status;
  std::vector<StreamReport> reports;
  std::vector<nlohmann::json> events;  // in file order

  const StreamReport& report(const std::string& stream) const;
  std::vector<nlohmann::json> events_of(const std::string& stream) const;
};

// Writes `yaml` (where "@EVENTS@" stands for the events file) to a fresh folder and runs the
// daemon on it until every stream ends or `duration_s` passes.
DaemonRun run_daemon(const std::string& yaml, std::optional<double> duration_s = std::nullopt);

// BGR images (OpenCV's conversion of the decoded planes) of the given frames of a clip.
std::map<int64_t, cv::Mat> decode_frames_bgr(const std::filesystem::path& clip, const std::vector<int64_t>& numbers);

// A running rtsp_test_server; killed when this goes out of scope.
class RtspServer {
 public:
  explicit RtspServer(const std::filesystem::path& clip);
  ~RtspServer();
  RtspServer(const RtspServer&) = delete;
  RtspServer& operator=(const RtspServer&) = delete;
  const std::string& url() const { return url_; }  // empty when it failed to start

 private:
  int pid_ = -1;
  std::string url_;
};

}  // namespace edgefuse::test
