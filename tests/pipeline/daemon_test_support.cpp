#include "tests/pipeline/daemon_test_support.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <gst/gst.h>
#include <netinet/in.h>
#include <opencv2/imgproc.hpp>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeline/config/config.h"
#include "pipeline/video/video_source.h"

namespace edgefuse::test {
namespace {

std::filesystem::path fresh_folder() {
  static std::atomic<int> counter{0};
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("edgefuse_daemon_test_" + std::to_string(getpid()) + "_" + std::to_string(counter.fetch_add(1)));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The decoded planes as one contiguous OpenCV I420/NV12 image, converted to BGR by OpenCV.
cv::Mat to_bgr(const DecodedFrame& frame) {
  const int w = frame.width(), h = frame.height();
  cv::Mat yuv(h * 3 / 2, w, CV_8UC1);
  uint8_t* out = yuv.data;
  const FramePlanes& planes = frame.planes();
  for (int row = 0; row < h; ++row, out += w) std::memcpy(out, planes.data[0] + row * planes.stride[0], w);
  if (frame.format() == FramePixelFormat::kNV12) {
    for (int row = 0; row < h / 2; ++row, out += w) std::memcpy(out, planes.data[1] + row * planes.stride[1], w);
  } else {
    for (int plane = 1; plane <= 2; ++plane) {
      for (int row = 0; row < h / 2; ++row, out += w / 2) {
        std::memcpy(out, planes.data[plane] + row * planes.stride[plane], w / 2);
      }
    }
  }
  cv::Mat bgr;
  cv::cvtColor(yuv, bgr, frame.format() == FramePixelFormat::kNV12 ? cv::COLOR_YUV2BGR_NV12 : cv::COLOR_YUV2BGR_I420);
  return bgr;
}

}  // namespace

const StreamReport& DaemonRun::report(const std::string& stream) const {
  for (const StreamReport& r : reports) {
    if (r.name == stream) return r;
  }
  FAIL("no report for stream " << stream);
  static StreamReport none;
  return none;
}

std::vector<nlohmann::json> DaemonRun::events_of(const std::string& stream) const {
  std::vector<nlohmann::json> selected;
  for (const nlohmann::json& event : events) {
    if (event.at("stream") == stream) selected.push_back(event);
  }
  return selected;
}

// The whole file ("" when absent). stdio, as istreambuf_iterator trips GCC 12's -Wnull-dereference.
std::string read_text_file(const std::filesystem::path& file) {
  std::string text;
  if (std::FILE* in = std::fopen(file.c_str(), "rb")) {
    char block[65536];
    for (size_t n; (n = std::fread(block, 1, sizeof block, in)) > 0;) text.append(block, n);
    std::fclose(in);
  }
  return text;
}

// Captures what is written to stderr (fd 2) while alive, and passes it through at the end.
class StderrCapture {
 public:
  explicit StderrCapture(const std::filesystem::path& file) : file_(file) {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  ~StderrCapture() { finish(); }
  std::string finish() {
    if (saved_ < 0) return text_;
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    saved_ = -1;
    text_ = read_text_file(file_);
    std::fwrite(text_.data(), 1, text_.size(), stderr);
    return text_;
  }

 private:
  std::filesystem::path file_;
  int saved_ = -1;
  std::string text_;
};

DaemonRun run_daemon(const std::string& yaml, std::optional<double> duration_s,
                     const std::function<void(Daemon&)>& during, bool stop_after_during) {
  const std::filesystem::path dir = fresh_folder();
  const std::filesystem::path events = dir / "events.jsonl";
  const std::filesystem::path config_file = dir / "config.yaml";
  std::ofstream(config_file) << replace_all(yaml, "@EVENTS@", events.string());

  DaemonRun run;
  StderrCapture capture(dir / "stderr.log");
  Result<DaemonConfig> config = load_config_file(config_file);
  if (!config.is_ok()) {
    run.status = config.status();
    run.log = capture.finish();
    return run;
  }
  Result<std::unique_ptr<Daemon>> daemon = Daemon::create(*config);
  if (!daemon.is_ok()) {
    run.status = daemon.status();
    run.log = capture.finish();
    return run;
  }
  std::atomic<bool> stop{false};
  std::thread observer;
  if (during) {
    observer = std::thread([&] {
      during(**daemon);
      if (stop_after_during) stop = true;
    });
  }
  run.status = (*daemon)->run(stop, duration_s);
  if (observer.joinable()) observer.join();
  run.reports = (*daemon)->reports();
  run.metrics = (*daemon)->render_metrics();
  run.streams = nlohmann::json::parse((*daemon)->render_streams_json());
  daemon->reset();  // closes the events file
  run.log = capture.finish();
  run.events_text = read_text_file(events);
  std::ifstream in(events);
  int64_t last_frame = -1;
  for (std::string line; std::getline(in, line);) {
    nlohmann::json event = nlohmann::json::parse(line);
    if (event.at("type") == "state") {
      run.state_events.push_back(std::move(event));
    } else if (event.at("type") == "track") {
      event["after_frame"] = last_frame;
      run.track_events.push_back(std::move(event));
    } else {
      last_frame = event.at("frame").get<int64_t>();
      run.events.push_back(std::move(event));
    }
  }
  std::filesystem::remove_all(dir);
  return run;
}

void write_clip_in_sizes(const std::filesystem::path& clip, const std::filesystem::path& out, int frames,
                         const std::vector<FrameSize>& sizes) {
  gst_init(nullptr, nullptr);
  std::ofstream joined(out, std::ios::binary | std::ios::trunc);
  for (const FrameSize& size : sizes) {
    // MPEG-TS files concatenated are one stream: the decoder meets the new size in-band.
    const std::filesystem::path part = out.string() + ".part";
    const std::string description =
        "filesrc location=\"" + clip.string() +
        "\" ! qtdemux ! h264parse ! avdec_h264 ! identity eos-after=" + std::to_string(frames) +
        " ! videoscale ! video/x-raw,width=" + std::to_string(size.width) + ",height=" + std::to_string(size.height) +
        " ! x264enc speed-preset=ultrafast key-int-max=30 ! h264parse ! mpegtsmux ! filesink location=\"" +
        part.string() + "\"";
    GError* error = nullptr;
    GstElement* pipeline = gst_parse_launch(description.c_str(), &error);
    if (error != nullptr) {
      const std::string why = error->message;
      g_error_free(error);
      FAIL(description, ": ", why);
    }
    REQUIRE(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    GstBus* bus = gst_element_get_bus(pipeline);
    GstMessage* message = gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND,
                                                     static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    const bool finished = message != nullptr && GST_MESSAGE_TYPE(message) == GST_MESSAGE_EOS;
    if (message != nullptr) gst_message_unref(message);
    gst_object_unref(bus);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
    REQUIRE_MESSAGE(finished, "writing ", part, " did not finish");
    std::ifstream in(part, std::ios::binary);
    joined << in.rdbuf();
    std::filesystem::remove(part);
  }
  REQUIRE(joined.good());
}

std::map<int64_t, cv::Mat> decode_frames_bgr(const std::filesystem::path& clip, const std::vector<int64_t>& numbers) {
  std::map<int64_t, cv::Mat> frames;
  std::mutex mutex;
  const std::set<int64_t> wanted(numbers.begin(), numbers.end());
  VideoSourceOptions options;
  options.name = "reference";
  options.address = {SourceKind::kFile, clip.string()};
  options.pipeline.realtime = false;
  Result<std::unique_ptr<VideoSource>> source = VideoSource::create(options, [&](DecodedFrame frame) {
    if (!wanted.count(frame.number)) return;
    cv::Mat bgr = to_bgr(frame);
    const std::lock_guard lock(mutex);
    frames[frame.number] = bgr;
  });
  REQUIRE(source.is_ok());
  REQUIRE((*source)->start().is_ok());
  while (!(*source)->done()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  (*source)->stop();
  return frames;
}

HttpReply http_get(int port, const std::string& path) {
  HttpReply reply;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{.tv_sec = 5, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return reply;
  }
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return reply;
  }
  std::string response;
  char block[8192];
  for (ssize_t n; (n = recv(fd, block, sizeof block, 0)) > 0;) response.append(block, static_cast<size_t>(n));
  close(fd);
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return reply;
  reply.status = std::stoi(response.substr(9, 3));
  const size_t body = response.find("\r\n\r\n");
  if (body != std::string::npos) reply.body = response.substr(body + 4);
  return reply;
}

RtspServer::RtspServer(const std::filesystem::path& clip, RtspServerOptions options)
    : clip_(clip), options_(std::move(options)) {
  launch();
}

bool RtspServer::launch() {
  int out[2];
  REQUIRE(pipe(out) == 0);
  const std::string port = std::to_string(options_.port);
  pid_ = fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    if (!options_.user.empty()) {
      setenv("EDGEFUSE_TEST_RTSP_USER", options_.user.c_str(), 1);
      setenv("EDGEFUSE_TEST_RTSP_PASSWORD", options_.password.c_str(), 1);
    }
    execl(EDGEFUSE_RTSP_TEST_SERVER, EDGEFUSE_RTSP_TEST_SERVER, clip_.c_str(), port.c_str(), "street", nullptr);
    _exit(127);
  }
  close(out[1]);
  FILE* lines = fdopen(out[0], "r");
  char line[256] = {};
  url_.clear();
  if (std::fgets(line, sizeof line, lines) != nullptr && std::string(line).rfind("ready ", 0) == 0) {
    url_ = std::string(line + 6);
    while (!url_.empty() && (url_.back() == '\n' || url_.back() == '\r')) url_.pop_back();
    // "rtsp://127.0.0.1:PORT/street": keep the port for restarts.
    const size_t colon = url_.rfind(':');
    options_.port = std::stoi(url_.substr(colon + 1));
  }
  std::fclose(lines);
  return !url_.empty();
}

void RtspServer::kill_now() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

bool RtspServer::restart() {
  kill_now();
  return launch();
}

void RtspServer::pause() {
  if (pid_ > 0) kill(pid_, SIGSTOP);
}

void RtspServer::resume() {
  if (pid_ > 0) kill(pid_, SIGCONT);
}

RtspServer::~RtspServer() {
  if (pid_ > 0) {
    kill(pid_, SIGCONT);
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

}  // namespace edgefuse::test
