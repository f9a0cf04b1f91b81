#include "pipeline/daemon/daemon.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "pipeline/daemon/daemon_log.h"
#include "pipeline/daemon/detection_event.h"

namespace edgefuse {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Errors per stream logged in full before they are only counted (a corrupt stream can fail every frame).
constexpr int64_t kLoggedFrameErrors = 5;

int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// 16 hex digits, fresh per daemon run: event ids "<run id>-<sequence>" never repeat across restarts.
std::string make_run_id() {
  std::random_device entropy;
  const uint64_t bits = (static_cast<uint64_t>(entropy()) << 32) ^ entropy() ^ static_cast<uint64_t>(unix_now_ns());
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
  return text;
}

SupervisorOptions supervisor_options(const StreamConfig& config, SourceKind kind) {
  SupervisorOptions options;
  // A file that failed would fail again (and replaying it would repeat its events): only cameras reconnect.
  options.reconnect = config.reconnect && (kind == SourceKind::kRtsp || kind == SourceKind::kV4l2);
  options.watchdog_s = config.watchdog_s;
  for (double& delay : options.backoff_s) delay = std::min(delay, config.max_backoff_s);
  return options;
}

Result<VideoSourceOptions> source_options(const StreamConfig& config) {
  EF_ASSIGN_OR_RETURN(SourceAddress address, parse_source_uri(config.uri));
  VideoSourceOptions options;
  options.name = config.name;
  options.address = std::move(address);
  options.loop = config.loop;
  options.pipeline.realtime = config.realtime;
  options.pipeline.rtsp_over_tcp = config.rtsp_transport != "udp";
  options.pipeline.decoder = config.decoder;
  options.pipeline.rtsp_credentials = {config.username, config.password};
  if (config.width > 0) options.pipeline.test_width = config.width;
  if (config.height > 0) options.pipeline.test_height = config.height;
  options.pipeline.test_framerate = config.framerate;
  return options;
}

}  // namespace

struct Daemon::Stream {
  StreamConfig config;
  size_t model = 0;               // index into models_
  int slot = 0;                   // index among its model's streams
  std::vector<int> class_filter;  // empty: every class
  StreamStats stats;
  std::unique_ptr<StreamSupervisor> supervisor;
  bool end_reported = false;
  int64_t last_frames_in = 0, last_processed = 0;  // at the previous statistics line
};

struct Daemon::Model {
  std::unique_ptr<ModelRunner> runner;
  std::vector<size_t> streams;  // indices into streams_, in slot order
  std::unique_ptr<FrameScheduler> scheduler;
  std::thread worker;
  int max_batch = 1;
};

Daemon::~Daemon() {
  shut_down();
}

Result<std::unique_ptr<Daemon>> Daemon::create(const DaemonConfig& config) {
  std::unique_ptr<Daemon> daemon(new Daemon());
  daemon->config_ = config;
  daemon->run_id_ = make_run_id();
  for (const ModelConfig& model_config : config.models) {
    auto model = std::make_unique<Model>();
    EF_ASSIGN_OR_RETURN(model->runner, ModelRunner::create(model_config));
    model->max_batch = model_config.max_batch;
    daemon_log("model '", model_config.name, "': ", model_config.path.string(), ", ",
               family_name(model->runner->detector().family()), " ", model->runner->detector().input_width(), "x",
               model->runner->detector().input_height(), ", ", model->runner->nodes_before_fusion(), " nodes -> ",
               model->runner->nodes_after_fusion(), " after fusion, max batch ", model->runner->max_batch());
    daemon->models_.push_back(std::move(model));
  }
  for (const StreamConfig& stream_config : config.streams) {
    auto stream = std::make_unique<Stream>();
    stream->config = stream_config;
    const auto model = std::find_if(config.models.begin(), config.models.end(),
                                    [&](const ModelConfig& m) { return m.name == stream_config.model; });
    if (model == config.models.end()) {
      return invalid_argument("stream '", stream_config.name, "': no model named '", stream_config.model, "'");
    }
    stream->model = static_cast<size_t>(model - config.models.begin());
    Model& owner = *daemon->models_[stream->model];
    Result<std::vector<int>> classes = owner.runner->class_ids(stream_config.classes);
    if (!classes.is_ok()) return classes.status().with_context(make_message("stream '", stream_config.name, "'"));
    stream->class_filter = std::move(*classes);
    stream->slot = static_cast<int>(owner.streams.size());
    owner.streams.push_back(daemon->streams_.size());
    daemon->streams_.push_back(std::move(stream));
  }
  for (size_t m = 0; m < daemon->models_.size(); ++m) {
    Model& model = *daemon->models_[m];
    std::vector<FrameScheduler::StreamSlot> slots;
    for (size_t index : model.streams) {
      Stream& stream = *daemon->streams_[index];
      slots.push_back({stream.config.queue_size, &stream.stats});
    }
    if (slots.empty()) continue;  // a model no stream uses stays loaded but idle
    model.scheduler = std::make_unique<FrameScheduler>(std::move(slots), model.max_batch,
                                                       std::chrono::milliseconds(config.models[m].batch_timeout_ms));
  }
  Daemon* self = daemon.get();
  for (size_t index = 0; index < daemon->streams_.size(); ++index) {
    Stream& stream = *daemon->streams_[index];
    EF_ASSIGN_OR_RETURN(VideoSourceOptions options, source_options(stream.config));
    const SupervisorOptions supervision = supervisor_options(stream.config, options.address.kind);
    auto on_frame = [self, index](DecodedFrame frame) {
      Stream& target = *self->streams_[index];
      // Numbered per stream, across reconnects (each new source counts from 0 again).
      const int64_t count = target.stats.frames_in.fetch_add(1);
      frame.number = count;
      if (count % target.config.inference_interval != 0) {
        target.stats.skipped.fetch_add(1);
        return;
      }
      self->models_[target.model]->scheduler->submit(target.slot, std::move(frame));
    };
    auto on_state = [self, index](const StateChange& change) { self->on_state_change(index, change); };
    stream.supervisor =
        std::make_unique<StreamSupervisor>(std::move(options), supervision, std::move(on_frame), std::move(on_state));
  }
  EF_ASSIGN_OR_RETURN(daemon->sink_, JsonLinesSink::open(config.events.path));
  return daemon;
}

Status Daemon::run(const std::atomic<bool>& stop, std::optional<double> duration_s) {
  for (auto& model : models_) {
    if (model->scheduler) model->worker = std::thread([this, m = model.get()] { model_worker(*m); });
  }
  int started = 0;
  for (auto& stream : streams_) {
    const Status status = stream->supervisor->start();
    if (status.is_ok()) {
      ++started;
      daemon_log("stream '", stream->config.name, "': started (", redact_uri(stream->config.uri), ")");
    } else {
      stream->end_reported = true;
      daemon_log("stream '", stream->config.name, "': ", status.message());
    }
  }
  if (started == 0) {
    shut_down();
    return io_error("no stream could start");
  }

  const auto begin = SteadyClock::now();
  auto next_stats = begin + std::chrono::duration<double>(config_.stats_interval_s);
  while (!stop.load() && !sink_failed_.load()) {
    if (duration_s && SteadyClock::now() - begin >= std::chrono::duration<double>(*duration_s)) break;
    bool any_running = false;
    for (auto& stream : streams_) {
      if (!stream->end_reported && !stream->supervisor->done()) any_running = true;
    }
    if (!any_running) break;
    if (config_.stats_interval_s > 0 && SteadyClock::now() >= next_stats) {
      log_stats(false);
      next_stats += std::chrono::duration<double>(config_.stats_interval_s);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  shut_down();
  log_stats(true);
  if (sink_failed_.load()) return io_error("events could not be written to '", sink_->path(), "'");
  return Status::ok();
}

void Daemon::shut_down() {
  if (shut_down_) return;
  shut_down_ = true;
  for (auto& stream : streams_) {
    if (stream->supervisor) stream->supervisor->stop();
  }
  for (auto& model : models_) {
    if (model->scheduler) model->scheduler->close();
  }
  for (auto& model : models_) {
    if (model->worker.joinable()) model->worker.join();
  }
}

void Daemon::model_worker(Model& model) {
  for (;;) {
    std::vector<PendingFrame> batch = model.scheduler->next_batch();
    if (batch.empty()) return;
    // The runner takes at most its max batch (1 when the model could not be batched).
    for (size_t first = 0; first < batch.size(); first += static_cast<size_t>(model.runner->max_batch())) {
      const size_t count = std::min(batch.size() - first, static_cast<size_t>(model.runner->max_batch()));
      std::vector<const DecodedFrame*> frames;
      for (size_t i = first; i < first + count; ++i) frames.push_back(&batch[i].frame);
      std::vector<Result<std::vector<Detection>>> results = model.runner->detect(frames);
      for (size_t i = 0; i < count; ++i) publish(model, batch[first + i], std::move(results[i]));
    }
  }
}

void Daemon::publish(Model& model, const PendingFrame& pending, Result<std::vector<Detection>> detected) {
  Stream& stream = *streams_[model.streams[static_cast<size_t>(pending.stream)]];
  const DecodedFrame& frame = pending.frame;
  stream.stats.processed.fetch_add(1);
  if (!detected.is_ok()) {
    const int64_t failures = stream.stats.failed.fetch_add(1) + 1;
    if (failures <= kLoggedFrameErrors) {
      daemon_log("stream '", stream.config.name, "': frame ", frame.number, " skipped: ", detected.status().message(),
                 failures == kLoggedFrameErrors ? " (further frame errors are only counted)" : "");
    }
    return;
  }
  std::vector<Detection> detections = std::move(*detected);
  if (!stream.class_filter.empty()) {
    std::erase_if(detections, [&](const Detection& d) {
      return std::find(stream.class_filter.begin(), stream.class_filter.end(), d.class_id) == stream.class_filter.end();
    });
  }
  std::stable_sort(detections.begin(), detections.end(),
                   [](const Detection& a, const Detection& b) { return a.score > b.score; });
  const double latency_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - frame.captured_at).count();
  stream.stats.add_latency_ms(latency_ms);
  if (detections.empty() && !config_.events.empty_frames) return;

  DetectionEvent event;
  event.stream = stream.config.name;
  event.model = model.runner->name();
  event.frame = frame.number;
  event.pts_ns = frame.pts_ns;
  event.wall_time_ns = unix_now_ns();
  event.latency_ms = latency_ms;
  event.width = frame.width();
  event.height = frame.height();
  event.detections = std::move(detections);
  event.id = next_event_id();
  if (emit(stream.config.name, event_to_json(event, model.runner->labels()))) stream.stats.events.fetch_add(1);
}

std::string Daemon::next_event_id() {
  return make_message(run_id_, '-', event_sequence_.fetch_add(1));
}

bool Daemon::emit(const std::string& /*stream*/, const std::string& json) {
  const Status written = sink_->write(json);
  if (written.is_ok()) return true;
  if (!sink_failed_.exchange(true)) daemon_log("stopping: ", written.message());
  return false;
}

void Daemon::on_state_change(size_t index, const StateChange& change) {
  Stream& stream = *streams_[index];
  const int64_t frames = stream.stats.frames_in.load();
  switch (change.to) {
    case StreamState::kEnded:
      daemon_log("stream '", stream.config.name, "': end of stream after ", frames, " frames; other streams continue");
      break;
    case StreamState::kFailed:
      daemon_log("stream '", stream.config.name, "': failed: ", change.reason, " after ", frames,
                 " frames; other streams continue");
      break;
    case StreamState::kBackoff:
      daemon_log("stream '", stream.config.name, "': ", change.reason, "; reconnecting in ",
                 make_message(static_cast<int>(change.delay_s * 10) / 10.0), " s");
      break;
    default:
      daemon_log("stream '", stream.config.name, "': ", stream_state_name(change.to), " (", change.reason, ")");
  }
  StateEvent event;
  event.id = next_event_id();
  event.stream = stream.config.name;
  event.state = stream_state_name(change.to);
  event.previous = stream_state_name(change.from);
  event.reason = change.reason;
  event.retry_in_s = change.delay_s;
  event.reconnects = stream.supervisor ? stream.supervisor->reconnects() : 0;
  event.wall_time_ns = unix_now_ns();
  emit(stream.config.name, state_event_to_json(event));
}

void Daemon::log_stats(bool final_summary) {
  const double interval = final_summary ? 0 : config_.stats_interval_s;
  for (auto& stream : streams_) {
    StreamStats& stats = stream->stats;
    const int64_t frames_in = stats.frames_in.load(), processed = stats.processed.load();
    const LatencySummary latency = final_summary ? stats.total() : stats.take_window();
    std::string rates;
    if (!final_summary && interval > 0) {
      rates = make_message(static_cast<double>(frames_in - stream->last_frames_in) / interval, " fps in, ",
                           static_cast<double>(processed - stream->last_processed) / interval, " processed/s, ");
    }
    stream->last_frames_in = frames_in;
    stream->last_processed = processed;
    daemon_log("stream '", stream->config.name, "'", final_summary ? " summary: " : ": ", rates, "frames in ",
               frames_in, ", processed ", processed, ", dropped ", stats.dropped.load(), ", skipped ",
               stats.skipped.load(), ", failed ", stats.failed.load(), ", events ", stats.events.load(),
               ", latency p50 ", latency.p50_ms, " ms p99 ", latency.p99_ms, " ms",
               stream->supervisor ? " (decoder " + stream->supervisor->decoder_name() + ")" : "");
  }
}

std::vector<StreamReport> Daemon::reports() const {
  std::vector<StreamReport> reports;
  for (const auto& stream : streams_) {
    StreamReport report;
    report.name = stream->config.name;
    report.frames_in = stream->stats.frames_in.load();
    report.skipped = stream->stats.skipped.load();
    report.dropped = stream->stats.dropped.load();
    report.processed = stream->stats.processed.load();
    report.failed = stream->stats.failed.load();
    report.events = stream->stats.events.load();
    report.latency = stream->stats.total();
    report.decoder = stream->supervisor ? stream->supervisor->decoder_name() : "";
    report.error = stream->supervisor ? stream->supervisor->last_error() : "";
    report.reconnects = stream->supervisor ? stream->supervisor->reconnects() : 0;
    report.state = stream->supervisor ? stream_state_name(stream->supervisor->state()) : "";
    reports.push_back(std::move(report));
  }
  return reports;
}

}  // namespace edgefuse
