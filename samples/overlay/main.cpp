// edgefuse-overlay: watch what the camera box sees. Runs one stream through the daemon's pipeline
// (GStreamer decoding -> fused preprocessing -> detector) and draws the detections on the frames,
// into an H.264 MP4 file and/or a live MJPEG view for a browser on 127.0.0.1.
//
// Usage:
//   edgefuse-overlay --source URI|PATH --model MODEL.onnx [--labels FILE] [--score 0.3] [--threads N]
//   edgefuse-overlay --config daemon.yaml --stream NAME
//   outputs (at least one):
//     --out FILE.mp4        record H.264 MP4 (hardware encoder when present, else x264enc)
//     --http PORT           live view at http://127.0.0.1:PORT/ (0: any free port, printed)
//     --snapshot FILE.jpg   the last overlay frame as a JPEG, written at exit
//   options:
//     --bind ADDR           live view address (default 127.0.0.1)
//     --duration S          stop after S seconds (default: until the stream ends or Ctrl-C)
//     --frames N            stop after N processed frames
//     --every-frame         file sources: decode at the model's pace and draw every frame (offline
//                           recording) instead of the stream's own pace, dropping late frames
//     --loop                file sources: start again at the end
//     --encoder NAME        GStreamer H.264 encoder element (default: auto)
//     --preview-width W     live view and snapshot width (default 960)
// Sources: a file path, file:///abs, rtsp://..., v4l2:///dev/videoN, test://ball.
// Example:
//   edgefuse-overlay --source ../shared/data/vtest_1080p30.mp4 --model assets/models/yolox_nano.onnx
//                    --out overlay.mp4 --http 8090
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/config/config.h"
#include "pipeline/daemon/model_runner.h"
#include "pipeline/daemon/stream_source.h"
#include "pipeline/overlay/i420_image.h"
#include "pipeline/overlay/overlay_output.h"
#include "pipeline/tracking/iou_tracker.h"
#include "pipeline/video/video_source.h"
#include "pipeline/zones/zone_monitor.h"

namespace edgefuse {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<bool> interrupted{false};

struct AppOptions {
  std::string source, model, labels, config, stream, out, snapshot, bind = "127.0.0.1", encoder = "auto";
  double score = -1, duration_s = 0;
  int threads = 0, http = -1, preview_width = 960;
  int64_t frames = 0;
  bool every_frame = false, loop = false;
};

int usage_error(const std::string& message) {
  std::cerr << "edgefuse-overlay: " << message << " (see the usage block at the top of samples/overlay/main.cpp)\n";
  return 2;
}

std::optional<AppOptions> parse_args(int argc, char** argv, std::string& error) {
  AppOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string(argv[++i]);
    };
    auto number = [&](double& out) {
      const std::optional<std::string> text = value();
      char* end = nullptr;
      if (text) out = std::strtod(text->c_str(), &end);
      return text && end && *end == '\0';
    };
    double n = 0;
    bool ok = true;
    if (flag == "--every-frame") {
      o.every_frame = true;
    } else if (flag == "--loop") {
      o.loop = true;
    } else if (flag == "--duration") {
      ok = number(o.duration_s) && o.duration_s > 0;
    } else if (flag == "--score") {
      ok = number(o.score) && o.score >= 0 && o.score <= 1;
    } else if (flag == "--threads" || flag == "--http" || flag == "--frames" || flag == "--preview-width") {
      ok = number(n) && n == static_cast<int64_t>(n) && n >= (flag == "--http" ? 0 : 1) && n <= 1e9;
      if (flag == "--threads") o.threads = static_cast<int>(n);
      if (flag == "--http") o.http = static_cast<int>(n);
      if (flag == "--frames") o.frames = static_cast<int64_t>(n);
      if (flag == "--preview-width") o.preview_width = static_cast<int>(n);
    } else {
      std::string* target = flag == "--source"     ? &o.source
                            : flag == "--model"    ? &o.model
                            : flag == "--labels"   ? &o.labels
                            : flag == "--config"   ? &o.config
                            : flag == "--stream"   ? &o.stream
                            : flag == "--out"      ? &o.out
                            : flag == "--snapshot" ? &o.snapshot
                            : flag == "--bind"     ? &o.bind
                            : flag == "--encoder"  ? &o.encoder
                                                   : nullptr;
      if (!target) {
        error = "unknown option " + flag;
        return std::nullopt;
      }
      const std::optional<std::string> text = value();
      ok = text.has_value();
      if (text) *target = *text;
    }
    if (!ok) {
      error = "bad or missing value for " + flag;
      return std::nullopt;
    }
  }
  if (o.config.empty() == o.source.empty()) {
    error = "give either --source and --model, or --config and --stream";
  } else if (!o.source.empty() && o.model.empty()) {
    error = "--source needs --model";
  } else if (!o.config.empty() && o.stream.empty()) {
    error = "--config needs --stream";
  } else if (o.out.empty() && o.http < 0 && o.snapshot.empty()) {
    error = "no output: give --out, --http or --snapshot";
  }
  if (!error.empty()) return std::nullopt;
  return o;
}

// The stream and model to run, from the command line or from the daemon's configuration.
Result<std::pair<StreamConfig, ModelConfig>> stream_and_model(const AppOptions& o) {
  if (o.config.empty()) {
    StreamConfig stream;
    stream.name = "overlay";
    stream.uri = o.source;
    stream.loop = o.loop;
    ModelConfig model;
    model.name = "model";
    model.path = o.model;
    model.labels = o.labels;
    model.threads = o.threads;
    if (o.score >= 0) model.score_threshold = o.score;
    return std::make_pair(stream, model);
  }
  EF_ASSIGN_OR_RETURN(DaemonConfig config, load_config_file(o.config));
  for (const StreamConfig& stream : config.streams) {
    if (stream.name != o.stream) continue;
    for (const ModelConfig& model : config.models) {
      if (model.name == stream.model) return std::make_pair(stream, model);
    }
  }
  return invalid_argument(o.config, ": no stream named '", o.stream, "'");
}

// Decoded frames waiting for the model: drop-oldest (live pace) or back-pressure (every frame).
class FrameQueue {
 public:
  explicit FrameQueue(bool block) : block_(block) {}
  void push(DecodedFrame frame) {
    std::unique_lock lock(mutex_);
    if (block_) changed_.wait(lock, [&] { return stopping_ || frames_.size() < 2; });
    if (stopping_) return;
    if (frames_.size() >= 2) frames_.pop_front();
    frames_.push_back(std::move(frame));
    changed_.notify_all();
  }
  std::optional<DecodedFrame> pop() {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, std::chrono::milliseconds(100), [&] { return !frames_.empty(); })) return std::nullopt;
    DecodedFrame frame = std::move(frames_.front());
    frames_.pop_front();
    changed_.notify_all();
    return frame;
  }
  void stop() {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }

 private:
  bool block_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<DecodedFrame> frames_;
  bool stopping_ = false;
};

Status write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return out ? Status::ok() : io_error("cannot write ", path);
}

Status run(const AppOptions& o) {
  EF_ASSIGN_OR_RETURN(auto configs, stream_and_model(o));
  const auto& [stream, model_config] = configs;
  EF_ASSIGN_OR_RETURN(std::unique_ptr<ModelRunner> runner, ModelRunner::create(model_config));
  std::vector<int> class_filter;
  if (!stream.classes.empty()) {
    EF_ASSIGN_OR_RETURN(class_filter, runner->class_ids(stream.classes));
  }
  // Track ids drawn beside the labels, zones and lines with their counts, masks and filters
  // applied, as the daemon gives them.
  IouTracker tracker(stream_tracker_options(stream));
  const ClassIdLookup class_ids = [&](const std::vector<std::string>& names) { return runner->class_ids(names); };
  EF_ASSIGN_OR_RETURN(ZoneMonitor zones, stream_zone_monitor(stream, class_ids));
  EF_ASSIGN_OR_RETURN(ObjectFilter object_filter, stream_object_filter(stream, class_ids));
  StreamClock clock;

  OverlayOptions overlay;
  overlay.stream_name = stream.name;
  overlay.labels = runner->labels();
  overlay.zones = zones.zones();
  overlay.lines = zones.lines();
  overlay.masks = object_filter.masks();
  overlay.mp4_path = o.out;
  overlay.encoder = o.encoder;
  overlay.http_port = o.http;
  overlay.bind_address = o.bind;
  overlay.preview_width = o.preview_width;
  overlay.lossless = o.every_frame;
  if (stream.uri.starts_with("test://")) overlay.fps = stream.framerate;
  EF_ASSIGN_OR_RETURN(std::unique_ptr<OverlayOutput> output, OverlayOutput::create(overlay));
  if (output->http_port() >= 0) {
    std::cerr << "live view: http://" << o.bind << ":" << output->http_port() << "/" << std::endl;
  }

  // The daemon's mapping (credentials included), with the app's own pacing and looping.
  EF_ASSIGN_OR_RETURN(VideoSourceOptions source_options, stream_source_options(stream));
  source_options.loop = stream.loop || o.loop;
  source_options.pipeline.realtime = stream.realtime && !o.every_frame;
  FrameQueue queue(o.every_frame);
  EF_ASSIGN_OR_RETURN(
      std::unique_ptr<VideoSource> source,
      VideoSource::create(source_options, [&queue](DecodedFrame frame) { queue.push(std::move(frame)); }));
  EF_RETURN_IF_ERROR(source->start());

  const auto started = Clock::now();
  int64_t processed = 0;
  double fps = -1;
  auto window_start = started;
  int64_t window_frames = 0;
  while (!interrupted.load()) {
    if (o.duration_s > 0 && Clock::now() - started >= std::chrono::duration<double>(o.duration_s)) break;
    if (o.frames > 0 && processed >= o.frames) break;
    std::optional<DecodedFrame> frame = queue.pop();
    if (!frame) {
      if (source->done()) break;
      continue;
    }
    const DecodedFrame* batch[] = {&*frame};
    std::vector<Result<std::vector<Detection>>> results = runner->detect(batch);
    if (!results.at(0).is_ok()) {
      std::cerr << "frame " << frame->number << ": " << results[0].status().to_string() << "\n";
      continue;
    }
    std::vector<Detection> detections = std::move(results[0]).value();
    if (!class_filter.empty()) {
      std::erase_if(detections, [&](const Detection& d) {
        return std::find(class_filter.begin(), class_filter.end(), d.class_id) == class_filter.end();
      });
    }
    object_filter.apply(detections, frame->width(), frame->height());
    if (stream.track) tracker.update(detections);
    OverlayStats stats;
    if (!zones.empty()) {
      const ZoneActivity activity =
          zones.update(detections, frame->width(), frame->height(), stream_seconds(clock, *frame));
      stats.zone_objects = activity.occupancy;
      stats.line_crossings = zones.totals().crossings;
    }
    ++processed;
    ++window_frames;
    const auto now = Clock::now();
    // fps over the last second or so; latency from capture to detections.
    if (now - window_start >= std::chrono::seconds(1)) {
      fps = window_frames / std::chrono::duration<double>(now - window_start).count();
      window_start = now;
      window_frames = 0;
    }
    const double latency_ms = std::chrono::duration<double, std::milli>(now - frame->captured_at).count();
    stats.fps = fps;
    stats.latency_ms = latency_ms;
    output->submit(*frame, std::move(detections), stats);
  }
  queue.stop();
  source->stop();
  const Status closed = output->close();
  const OverlayCounters counters = output->counters();
  std::cerr << "processed " << processed << " frames; overlay drew " << counters.drawn << ", dropped "
            << counters.dropped << ", recorded " << counters.written;
  if (!o.out.empty()) std::cerr << " with " << output->encoder_name() << " to " << o.out;
  std::cerr << "\n";
  if (source->state() == SourceState::kFailed) std::cerr << "source: " << source->error() << "\n";
  if (!o.snapshot.empty()) {
    const std::shared_ptr<const I420Image> last = output->latest_frame();
    if (!last) return io_error("no frame was drawn, so no snapshot");
    EF_RETURN_IF_ERROR(write_file(o.snapshot, encode_jpeg(downscale_i420(*last, o.preview_width), 85)));
  }
  return closed;
}

}  // namespace
}  // namespace edgefuse

int main(int argc, char** argv) {
  std::string error;
  const std::optional<edgefuse::AppOptions> options = edgefuse::parse_args(argc, argv, error);
  if (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::cout << "see the usage block at the top of samples/overlay/main.cpp\n";
    return 0;
  }
  if (!options) return edgefuse::usage_error(error);
  std::signal(SIGINT, [](int) { edgefuse::interrupted = true; });
  std::signal(SIGTERM, [](int) { edgefuse::interrupted = true; });
  const edgefuse::Status status = edgefuse::run(*options);
  if (!status.is_ok()) {
    std::cerr << "edgefuse-overlay: " << status.to_string() << "\n";
    return 1;
  }
  return 0;
}
