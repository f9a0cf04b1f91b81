#include "pipeline/daemon/daemon.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "pipeline/daemon/daemon_log.h"
#include "pipeline/daemon/daemon_parts.h"
#include "pipeline/daemon/detection_event.h"
#include "pipeline/daemon/stream_source.h"

namespace edgefuse {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Errors per stream logged in full before they are only counted (a corrupt stream can fail every frame).
constexpr int64_t kLoggedFrameErrors = 5;

int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// An object newly in view, entering a zone, loitering in one or crossing a line: the moments worth
// a picture.
bool worth_a_snapshot(const std::vector<int64_t>& newly_confirmed_tracks, const ZoneActivity& activity) {
  return !newly_confirmed_tracks.empty() || !activity.crossings.empty() ||
         std::any_of(activity.transitions.begin(), activity.transitions.end(),
                     [](const ZoneTransition& t) { return t.event != ZoneEvent::kLeave; });
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

template <typename Item>
const Item* find_named(const std::vector<Item>& items, const std::string& name) {
  const auto found = std::find_if(items.begin(), items.end(), [&](const Item& item) { return item.name == name; });
  return found == items.end() ? nullptr : &*found;
}

}  // namespace

Daemon::~Daemon() {
  shut_down();
}

Result<std::unique_ptr<Daemon::Model>> Daemon::load_model(const ModelConfig& config) const {
  auto model = std::make_unique<Model>();
  model->config = config;
  EF_ASSIGN_OR_RETURN(model->runner, ModelRunner::create(config));
  model->scheduler = std::make_unique<FrameScheduler>(std::vector<FrameScheduler::StreamSlot>{}, config.max_batch,
                                                      std::chrono::milliseconds(config.batch_timeout_ms));
  const Detector& detector = model->runner->detector();
  daemon_log("model '", config.name, "': ", config.path.string(), ", ", family_name(detector.family()), " ",
             detector.input_width(), "x", detector.input_height(), ", ", model->runner->nodes_before_fusion(),
             " nodes -> ", model->runner->nodes_after_fusion(), " after fusion, max batch ", model->runner->max_batch(),
             ", on ", detector.device_description());
  return model;
}

Result<std::unique_ptr<Daemon::Stream>> Daemon::build_stream(const StreamConfig& config, Model& model) {
  auto stream = std::make_unique<Stream>();
  stream->config = config;
  stream->model = &model;
  Result<std::vector<int>> classes = model.runner->class_ids(config.classes);
  if (!classes.is_ok()) return classes.status().with_context(make_message("stream '", config.name, "'"));
  stream->class_filter = std::move(*classes);
  stream->motion = MotionGate(stream_motion_options(config));
  stream->tracker = IouTracker(stream_tracker_options(config));
  stream->journal = TrackJournal(config.track_max_age);
  Result<ZoneMonitor> zones = stream_zone_monitor(
      config, [&](const std::vector<std::string>& names) { return model.runner->class_ids(names); });
  if (!zones.is_ok()) return zones.status().with_context(make_message("stream '", config.name, "'"));
  stream->zones = std::move(*zones);
  Result<ObjectFilter> object_filter = stream_object_filter(
      config, [&](const std::vector<std::string>& names) { return model.runner->class_ids(names); });
  if (!object_filter.is_ok()) return object_filter.status().with_context(make_message("stream '", config.name, "'"));
  stream->object_filter = std::move(*object_filter);
  for (size_t z = 0; z < stream->zones.zones().size(); ++z) {
    stream->zone_dwell_s.push_back(std::make_unique<Histogram>(dwell_buckets_s()));
  }
  EF_ASSIGN_OR_RETURN(VideoSourceOptions options, stream_source_options(config));
  // Built once now so that a pipeline GStreamer cannot build is the config's error, not a stream failure.
  EF_ASSIGN_OR_RETURN(std::unique_ptr<VideoSource> probe, VideoSource::create(options, [](DecodedFrame) {}));
  probe.reset();
  const SupervisorOptions supervision = supervisor_options(config, options.address.kind);
  Stream* self = stream.get();
  auto on_frame = [self](DecodedFrame frame) {
    // Numbered per stream, across reconnects (each new source counts from 0 again).
    const int64_t count = self->stats.frames_in.fetch_add(1);
    frame.number = count;
    if (count % self->config.inference_interval != 0) {
      self->stats.skipped.fetch_add(1);
      return;
    }
    if (self->config.motion_gate && !self->motion.let_through(frame, SteadyClock::now())) {
      self->stats.still.fetch_add(1);
      self->stats.skipped.fetch_add(1);
      return;
    }
    self->model->scheduler->submit(self->slot, std::move(frame));
  };
  auto on_state = [this, self](const StateChange& change) { on_state_change(*self, change); };
  stream->supervisor =
      std::make_unique<StreamSupervisor>(std::move(options), supervision, std::move(on_frame), std::move(on_state));
  return stream;
}

Result<std::unique_ptr<Daemon>> Daemon::create(const DaemonConfig& config) {
  std::unique_ptr<Daemon> daemon(new Daemon());
  daemon->config_ = config;
  daemon->empty_frame_events_ = config.events.empty_frames;
  daemon->track_events_ = config.events.tracks;
  daemon->run_id_ = make_run_id();
  for (const ModelConfig& model_config : config.models) {
    EF_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, daemon->load_model(model_config));
    daemon->models_.push_back(std::move(model));
  }
  for (const StreamConfig& stream_config : config.streams) {
    const auto model = std::find_if(daemon->models_.begin(), daemon->models_.end(),
                                    [&](const auto& m) { return m->config.name == stream_config.model; });
    if (model == daemon->models_.end()) {
      return invalid_argument("stream '", stream_config.name, "': no model named '", stream_config.model, "'");
    }
    EF_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream, daemon->build_stream(stream_config, **model));
    EF_RETURN_IF_ERROR(daemon->open_overlay(*stream));
    daemon->attach_stream(std::move(stream));
  }
  EF_ASSIGN_OR_RETURN(daemon->sink_, JsonLinesSink::open(config.events.path));
  EF_RETURN_IF_ERROR(daemon->open_mqtt());
  return daemon;
}

void Daemon::start_model(Model& model) {
  model.worker = std::thread([this, m = &model] { model_worker(*m); });
}

void Daemon::attach_stream(std::unique_ptr<Stream> stream) {
  Stream& added = *stream;
  Model& model = *added.model;
  added.slot = model.scheduler->add_stream({added.config.queue_size, &added.stats});
  {
    const std::lock_guard lock(model.slots_mutex);
    if (model.slots.size() <= static_cast<size_t>(added.slot)) model.slots.resize(static_cast<size_t>(added.slot) + 1);
    model.slots[static_cast<size_t>(added.slot)] = &added;
  }
  {
    const std::unique_lock lock(topology_mutex_);
    streams_.push_back(std::move(stream));
  }
  if (!running_) return;
  if (const Status started = added.supervisor->start(); started.is_ok()) {
    daemon_log("stream '", added.config.name, "': started (", redact_uri(added.config.uri), ")");
  } else {
    added.start_failed = true;
    daemon_log("stream '", added.config.name, "': ", started.message());
  }
}

void Daemon::detach_stream(const std::string& name) {
  const auto found =
      std::find_if(streams_.begin(), streams_.end(), [&](const auto& s) { return s->config.name == name; });
  if (found == streams_.end()) return;
  Stream& stream = **found;
  stream.supervisor->stop();
  // Its queued frames are processed and their events written before it goes, then the records of
  // the tracks still in view.
  stream.model->scheduler->remove_stream(stream.slot);
  emit_track_events(stream, stream.journal.close());
  {
    const std::lock_guard lock(stream.model->slots_mutex);
    stream.model->slots[static_cast<size_t>(stream.slot)] = nullptr;
  }
  close_overlay(stream);
  log_final_summary(stream);
  const std::unique_lock lock(topology_mutex_);
  streams_.erase(found);
}

void Daemon::stop_model(Model& model) {
  model.scheduler->close();
  if (model.worker.joinable()) model.worker.join();
}

Status Daemon::run(const std::atomic<bool>& stop, std::optional<double> duration_s, std::atomic<bool>* reload) {
  if (Status http = start_status_server(); !http.is_ok()) {
    shut_down();
    return http;
  }
  running_ = true;
  mark_loop_alive();
  for (auto& model : models_) start_model(*model);
  int started = 0;
  for (auto& stream : streams_) {
    const Status status = stream->supervisor->start();
    if (status.is_ok()) {
      ++started;
      daemon_log("stream '", stream->config.name, "': started (", redact_uri(stream->config.uri), ")");
    } else {
      stream->start_failed = true;
      daemon_log("stream '", stream->config.name, "': ", status.message());
    }
  }
  if (started == 0) {
    shut_down();
    return io_error("no stream could start");
  }
  notifier_.ready(make_message(models_.size(), " model(s), ", streams_.size(), " stream(s)"));

  set_serving_reloads(true);
  const auto begin = SteadyClock::now();
  auto next_stats = begin + std::chrono::duration<double>(config_.stats_interval_s);
  auto next_rates = begin;
  while (!stop.load() && !sink_failed_.load()) {
    mark_loop_alive();
    if (duration_s && SteadyClock::now() - begin >= std::chrono::duration<double>(*duration_s)) break;
    if (reload != nullptr && reload->exchange(false)) reload_from_file();
    serve_reload_requests();
    const bool any_running = std::any_of(streams_.begin(), streams_.end(), [](const auto& stream) {
      return !stream->start_failed && !stream->supervisor->done();
    });
    if (!any_running) break;
    if (config_.stats_interval_s > 0 && SteadyClock::now() >= next_stats) {
      log_stats(false);
      next_stats += std::chrono::duration<double>(config_.stats_interval_s);
    }
    if (SteadyClock::now() >= next_rates) {
      update_frame_rates();
      next_rates += std::chrono::seconds(1);
    }
    notifier_.keep_alive();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  set_serving_reloads(false);
  notifier_.stopping();
  shut_down();
  log_stats(true);
  if (sink_failed_.load()) return io_error("events could not be written to '", sink_->path(), "'");
  return Status::ok();
}

std::future<Status> Daemon::request_reload(DaemonConfig next) {
  const std::lock_guard lock(reload_mutex_);
  std::promise<Status> promise;
  std::future<Status> answer = promise.get_future();
  if (serving_reloads_) {
    reload_requests_.emplace_back(std::move(next), std::move(promise));
  } else {
    promise.set_value(Status(StatusCode::kIoError, "the daemon is not running; the configuration was not reloaded"));
  }
  return answer;
}

// The run loop takes reload requests from its start to its end; when it ends, those still waiting
// are answered, so that no requester waits forever on a daemon that stopped first.
void Daemon::set_serving_reloads(bool serving) {
  std::vector<std::pair<DaemonConfig, std::promise<Status>>> unserved;
  {
    const std::lock_guard lock(reload_mutex_);
    serving_reloads_ = serving;
    if (!serving) unserved.swap(reload_requests_);
  }
  for (auto& [next, promise] : unserved) {
    promise.set_value(Status(StatusCode::kIoError, "the daemon stopped before the reload; it was not applied"));
  }
}

void Daemon::serve_reload_requests() {
  std::vector<std::pair<DaemonConfig, std::promise<Status>>> requests;
  {
    const std::lock_guard lock(reload_mutex_);
    requests.swap(reload_requests_);
  }
  for (auto& [next, promise] : requests) {
    Status applied = apply_config(next);
    if (!applied.is_ok()) daemon_log("reload rejected, the running configuration stays: ", applied.message());
    promise.set_value(std::move(applied));
  }
}

void Daemon::reload_from_file() {
  notifier_.reloading();
  daemon_log("reload: reading ", config_.source.string());
  Result<DaemonConfig> next = load_config_file(config_.source);
  const Status applied = next.is_ok() ? apply_config(*next) : next.status();
  if (!applied.is_ok()) daemon_log("reload rejected, the running configuration stays: ", applied.message());
  notifier_.ready(make_message(models_.size(), " model(s), ", streams_.size(), " stream(s)"));
}

Status Daemon::apply_config(const DaemonConfig& next) {
  // Plan: which models load anew, which streams restart. Nothing changes until all of it is ready.
  std::vector<std::unique_ptr<Model>> loaded;  // new or changed models, not yet in models_
  for (const ModelConfig& model_config : next.models) {
    const auto old = std::find_if(models_.begin(), models_.end(),
                                  [&](const auto& m) { return m->config.name == model_config.name; });
    if (old != models_.end() && (*old)->config == model_config) continue;
    Result<std::unique_ptr<Model>> model = load_model(model_config);
    if (!model.is_ok()) return model.status().with_context("reload");
    loaded.push_back(std::move(model).value());
  }
  auto model_named = [&](const std::string& name) -> Model* {
    for (auto& model : loaded) {
      if (model->config.name == name) return model.get();
    }
    for (auto& model : models_) {
      if (model->config.name == name) return model.get();
    }
    return nullptr;
  };
  std::vector<std::unique_ptr<Stream>> built;
  for (const StreamConfig& stream_config : next.streams) {
    Model* model = model_named(stream_config.model);
    EF_ASSERT(model != nullptr, "config parsing checks stream models");
    const auto old = std::find_if(streams_.begin(), streams_.end(),
                                  [&](const auto& s) { return s->config.name == stream_config.name; });
    const bool unchanged = old != streams_.end() && (*old)->config == stream_config && (*old)->model == model;
    if (unchanged) continue;
    Result<std::unique_ptr<Stream>> stream = build_stream(stream_config, *model);
    if (!stream.is_ok()) return stream.status().with_context("reload");
    built.push_back(std::move(stream).value());
  }

  // Commit: streams that go or restart, then models that go or are replaced, then the new ones.
  std::vector<std::string> removed, restarted, added;
  std::vector<std::string> stream_names;
  for (const auto& stream : streams_) stream_names.push_back(stream->config.name);
  for (const std::string& name : stream_names) {
    const bool kept = find_named(next.streams, name) != nullptr;
    const bool rebuilt = std::any_of(built.begin(), built.end(), [&](const auto& s) { return s->config.name == name; });
    if (kept && !rebuilt) continue;
    (kept ? restarted : removed).push_back(name);
    detach_stream(name);
  }
  for (auto it = models_.begin(); it != models_.end();) {
    const bool kept = find_named(next.models, (*it)->config.name) != nullptr;
    const bool replaced =
        std::any_of(loaded.begin(), loaded.end(), [&](const auto& m) { return m->config.name == (*it)->config.name; });
    if (kept && !replaced) {
      ++it;
      continue;
    }
    daemon_log("reload: model '", (*it)->config.name, "' ", replaced ? "reloaded" : "removed");
    stop_model(**it);
    const std::unique_lock lock(topology_mutex_);
    it = models_.erase(it);
  }
  for (auto& model : loaded) {
    start_model(*model);
    const std::unique_lock lock(topology_mutex_);
    models_.push_back(std::move(model));
  }
  for (auto& stream : built) {
    if (std::find(restarted.begin(), restarted.end(), stream->config.name) == restarted.end()) {
      added.push_back(stream->config.name);
    }
    // Opened only now: a restarted stream's old overlay held the same file and port until detached.
    if (const Status overlay = open_overlay(*stream); !overlay.is_ok()) {
      daemon_log("reload: ", overlay.message(), "; the stream runs without it");
    }
    attach_stream(std::move(stream));
  }

  // Outputs and intervals are opened once; changing them needs a restart.
  DaemonConfig applied = next;
  if (!(next.events == config_.events)) daemon_log("reload: events changes take effect after a restart");
  applied.events = config_.events;
  applied.source = next.source.empty() ? config_.source : next.source;
  config_ = std::move(applied);
  auto join = [](const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
    return text.empty() ? std::string("none") : text;
  };
  daemon_log("reload applied: streams restarted: ", join(restarted), "; added: ", join(added),
             "; removed: ", join(removed), "; models reloaded or added: ", loaded.size());
  return Status::ok();
}

void Daemon::shut_down() {
  if (shut_down_) return;
  shut_down_ = true;
  for (auto& stream : streams_) {
    if (stream->supervisor) stream->supervisor->stop();
  }
  for (auto& model : models_) stop_model(*model);
  for (auto& stream : streams_) {
    emit_track_events(*stream, stream->journal.close());  // the workers are gone: the journals are ours
    close_overlay(*stream);
  }
  close_mqtt();
  status_server_.reset();  // served metrics until the last frame was drained
}

void Daemon::update_frame_rates() {
  constexpr double kWindowSeconds = 5;
  const double now = std::chrono::duration<double>(SteadyClock::now().time_since_epoch()).count();
  for (auto& stream : streams_) {
    auto& samples = stream->rate_samples;
    samples.emplace_back(now, stream->stats.frames_in.load());
    while (samples.size() > 2 && now - samples.front().first > kWindowSeconds) samples.pop_front();
    const double span = samples.back().first - samples.front().first;
    stream->stats.fps = span > 0 ? static_cast<double>(samples.back().second - samples.front().second) / span : 0;
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
      const auto started = SteadyClock::now();
      std::vector<Result<std::vector<Detection>>> results = model.runner->detect(frames);
      model.inference_ms.observe(std::chrono::duration<double, std::milli>(SteadyClock::now() - started).count());
      model.batch_size.observe(static_cast<double>(count));
      for (size_t i = 0; i < count; ++i) publish(model, batch[first + i], std::move(results[i]));
    }
    model.scheduler->finished(batch);
  }
}

void Daemon::publish(Model& model, const PendingFrame& pending, Result<std::vector<Detection>> detected) {
  Stream* owner = nullptr;
  {
    const std::lock_guard lock(model.slots_mutex);
    owner = model.slots[static_cast<size_t>(pending.stream)];
  }
  EF_ASSERT(owner != nullptr, "a frame outlived its stream");
  Stream& stream = *owner;
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
  const DropCounts dropped = stream.object_filter.apply(detections, frame.width(), frame.height());
  for (size_t reason = 0; reason < kDropReasons; ++reason) {
    if (dropped[reason] > 0) stream.stats.detections_dropped[reason].fetch_add(dropped[reason]);
  }
  std::stable_sort(detections.begin(), detections.end(),
                   [](const Detection& a, const Detection& b) { return a.score > b.score; });
  // Frames of a stream reach this model's one worker in order, so the tracker sees them so.
  if (stream.config.track) {
    stream.tracker.update(detections);
    stream.stats.tracks.store(static_cast<int64_t>(stream.tracker.live_tracks()));
    stream.stats.tracks_started.store(stream.tracker.tracks_started());
  }
  const double seconds = stream_seconds(stream.clock, frame);
  ZoneActivity zone_activity;
  if (!stream.zones.empty()) {
    zone_activity = stream.zones.update(detections, frame.width(), frame.height(), seconds);
    for (const ZoneTransition& t : zone_activity.transitions) {
      if (t.event == ZoneEvent::kLeave) stream.zone_dwell_s[t.zone]->observe(t.dwell_s);
    }
    publish_zone_states(stream, zone_activity);
  }
  // Records of the tracks the tracker gave up on this frame, emitted after the frame's own event.
  const bool journal = track_events_ && stream.config.track;
  std::vector<TrackRecord> ended;
  if (journal) {
    std::vector<int64_t> crossed;
    for (const LineCrossing& crossing : zone_activity.crossings) crossed.push_back(crossing.track_id);
    ended = stream.journal.update({.number = frame.number, .pts_ns = frame.pts_ns, .seconds = seconds}, detections,
                                  crossed);
  }
  const double latency_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - frame.captured_at).count();
  stream.stats.add_latency_ms(latency_ms);
  submit_overlay(stream, frame, detections, latency_ms);
  // A frame whose tracks left a zone unseen has no detections but has news.
  if (detections.empty() && !zone_activity.has_events() && !empty_frame_events_) {
    emit_track_events(stream, std::move(ended));
    return;
  }

  DetectionEvent event;
  event.stream = stream.config.name;
  event.model = model.runner->name();
  event.frame = frame.number;
  event.pts_ns = frame.pts_ns;
  event.wall_time_ns = unix_now_ns();
  event.latency_ms = latency_ms;
  event.width = frame.width();
  event.height = frame.height();
  event.id = next_event_id();
  // (Without track the tracker never runs: nothing is newly confirmed.)
  if (worth_a_snapshot(stream.tracker.newly_confirmed(), zone_activity)) {
    event.snapshot = take_snapshot(stream, frame, detections, event.id);
  }
  event.detections = std::move(detections);
  if (!stream.zones.empty()) {
    event.zones = &stream.zones;
    event.zone_activity = std::move(zone_activity);
  }
  if (journal) stream.journal.note_snapshot(event.detections, event.snapshot);
  if (emit(stream.config.name, event_to_json(event, model.runner->labels()))) stream.stats.events.fetch_add(1);
  emit_track_events(stream, std::move(ended));
}

void Daemon::emit_track_events(Stream& stream, std::vector<TrackRecord> records) {
  for (TrackRecord& record : records) {
    TrackEvent event;
    event.id = next_event_id();
    event.stream = stream.config.name;
    event.model = stream.model->runner->name();
    event.record = std::move(record);
    event.zone_names = stream.zones.zone_names();
    event.wall_time_ns = unix_now_ns();
    if (emit(stream.config.name, track_event_to_json(event, stream.model->runner->labels()))) {
      stream.stats.track_events.fetch_add(1);
    }
  }
}

std::string Daemon::next_event_id() {
  return make_message(run_id_, '-', event_sequence_.fetch_add(1));
}

bool Daemon::emit(const std::string& stream, const std::string& json) {
  publish_mqtt(stream, json);  // first: on disk in the spool before it is in the events file
  const Status written = sink_->write(json);
  if (written.is_ok()) return true;
  if (!sink_failed_.exchange(true)) daemon_log("stopping: ", written.message());
  return false;
}

void Daemon::on_state_change(Stream& stream, const StateChange& change) {
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
                 static_cast<int>(change.delay_s * 10) / 10.0, " s");
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

void Daemon::log_final_summary(Stream& stream) {
  StreamStats& stats = stream.stats;
  const LatencySummary latency = stats.total();
  int64_t filtered = 0;
  for (const auto& count : stats.detections_dropped) filtered += count.load();
  daemon_log("stream '", stream.config.name, "' summary: frames in ", stats.frames_in.load(), ", processed ",
             stats.processed.load(), ", dropped ", stats.dropped.load(), ", skipped ", stats.skipped.load(),
             stream.config.motion_gate ? make_message(" (", stats.still.load(), " still)") : std::string(), ", failed ",
             stats.failed.load(), ", events ", stats.events.load(),
             stream.object_filter.empty() ? std::string() : make_message(", detections masked or filtered ", filtered),
             ", latency p50 ", latency.p50_ms, " ms p99 ", latency.p99_ms, " ms (decoder ",
             stream.supervisor->decoder_name(), ")");
}

void Daemon::log_stats(bool final_summary) {
  const double interval = config_.stats_interval_s;
  for (auto& stream : streams_) {
    if (final_summary) {
      log_final_summary(*stream);
      continue;
    }
    StreamStats& stats = stream->stats;
    const int64_t frames_in = stats.frames_in.load(), processed = stats.processed.load();
    const LatencySummary latency = stats.take_window();
    daemon_log("stream '", stream->config.name, "': ", stream_state_name(stream->supervisor->state()), ", ",
               static_cast<double>(frames_in - stream->last_frames_in) / interval, " fps in, ",
               static_cast<double>(processed - stream->last_processed) / interval, " processed/s, frames in ",
               frames_in, ", processed ", processed, ", dropped ", stats.dropped.load(), ", skipped ",
               stats.skipped.load(), ", failed ", stats.failed.load(), ", events ", stats.events.load(),
               ", latency p50 ", latency.p50_ms, " ms p99 ", latency.p99_ms, " ms");
    stream->last_frames_in = frames_in;
    stream->last_processed = processed;
  }
}

std::vector<StreamReport> Daemon::reports() const {
  const std::shared_lock lock(topology_mutex_);
  std::vector<StreamReport> reports;
  for (const auto& stream : streams_) {
    StreamReport report;
    report.name = stream->config.name;
    report.frames_in = stream->stats.frames_in.load();
    report.skipped = stream->stats.skipped.load();
    report.still = stream->stats.still.load();
    report.dropped = stream->stats.dropped.load();
    report.processed = stream->stats.processed.load();
    report.failed = stream->stats.failed.load();
    report.events = stream->stats.events.load();
    report.latency = stream->stats.total();
    report.decoder = stream->supervisor->decoder_name();
    report.error = stream->supervisor->last_error();
    report.reconnects = stream->supervisor->reconnects();
    report.state = stream_state_name(stream->supervisor->state());
    reports.push_back(std::move(report));
  }
  return reports;
}

}  // namespace edgefuse
