// The per-stream overlay: a bounded queue in front of a worker that copies, draws, records and publishes.
#include "pipeline/overlay/overlay_output.h"

#include <algorithm>
#include <cmath>

#include "pipeline/overlay/live_view.h"
#include "pipeline/overlay/overlay_writer.h"

namespace edgefuse {

OverlayOutput::OverlayOutput(OverlayOptions options) : options_(std::move(options)) {
  text_.stream_name = options_.stream_name;
  text_.labels = options_.labels;
  text_.zones = options_.zones;
  text_.lines = options_.lines;
  text_.masks = options_.masks;
}

Result<std::unique_ptr<OverlayOutput>> OverlayOutput::create(OverlayOptions options) {
  if (options.queue_size < 1 || options.queue_size > 64) {
    return invalid_argument("overlay: queue_size ", options.queue_size, " outside 1..64");
  }
  if (!(options.fps > 0)) return invalid_argument("overlay: fps ", options.fps, " must be positive");
  if (options.http_port < -1 || options.http_port > 65535) {
    return invalid_argument("overlay: http_port ", options.http_port, " outside -1..65535");
  }
  if (options.preview_width < 16)
    return invalid_argument("overlay: preview_width ", options.preview_width, " below 16");
  if (!options.mp4_path.empty() && options.mp4_path.has_parent_path() &&
      !std::filesystem::is_directory(options.mp4_path.parent_path())) {
    return invalid_argument("overlay: folder of ", options.mp4_path.string(), " does not exist");
  }
  std::unique_ptr<OverlayOutput> output(new OverlayOutput(std::move(options)));
  if (output->options_.http_port >= 0) {
    LiveViewOptions view;
    view.bind_address = output->options_.bind_address;
    view.port = output->options_.http_port;
    view.preview_width = output->options_.preview_width;
    view.max_fps = output->options_.preview_fps;
    view.title =
        output->options_.stream_name.empty() ? "edgefuse overlay" : "edgefuse overlay: " + output->options_.stream_name;
    EF_ASSIGN_OR_RETURN(output->live_view_, LiveView::create(std::move(view)));
  }
  output->worker_ = std::thread([self = output.get()] { self->run(); });
  return output;
}

OverlayOutput::~OverlayOutput() {
  (void)close();
}

void OverlayOutput::submit(const DecodedFrame& frame, std::vector<Detection> detections, const OverlayStats& stats) {
  std::unique_lock lock(mutex_);
  if (closing_) return;
  if (options_.lossless) {
    has_room_.wait(lock, [this] { return closing_ || static_cast<int>(queue_.size()) < options_.queue_size; });
    if (closing_) return;
  } else if (static_cast<int>(queue_.size()) >= options_.queue_size) {
    queue_.pop_front();
    ++counters_.dropped;
  }
  queue_.push_back({frame, std::move(detections), stats});
  ++counters_.submitted;
  lock.unlock();
  has_item_.notify_one();
}

void OverlayOutput::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    has_item_.wait(lock, [this] { return closing_ || !queue_.empty(); });
    if (queue_.empty()) break;  // closing and drained
    Item item = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    has_room_.notify_one();
    render(item);
    lock.lock();
  }
  lock.unlock();
  if (writer_) {
    Status status = writer_->close();
    const std::lock_guard guard(mutex_);
    if (error_.is_ok()) error_ = status;
  }
}

std::filesystem::path overlay_recording_path(const std::filesystem::path& mp4_path, int64_t changes) {
  if (changes == 0) return mp4_path;
  std::filesystem::path path = mp4_path;
  path.replace_filename(make_message(mp4_path.stem().string(), '.', changes, mp4_path.extension().string()));
  return path;
}

int64_t OverlayOutput::next_pts_ns(const DecodedFrame& frame) {
  const auto frame_ns = static_cast<int64_t>(1e9 / options_.fps);
  int64_t pts = last_out_pts_ns_ < 0 ? 0 : last_out_pts_ns_ + frame_ns;
  if (frame.pts_ns >= 0) {
    if (first_pts_ns_ < 0) first_pts_ns_ = frame.pts_ns;
    const int64_t own = frame.pts_ns - first_pts_ns_;
    // The stream's spacing (keeps real time when frames were skipped), unless it went back (a loop).
    if (last_out_pts_ns_ < 0 || own > last_out_pts_ns_) pts = own;
  }
  last_out_pts_ns_ = pts;
  return pts;
}

void OverlayOutput::render(Item& item) {
  auto canvas = std::make_shared<I420Image>();
  copy_to_i420(item.frame, *canvas);
  const int64_t pts = next_pts_ns(item.frame);
  item.frame = DecodedFrame(nullptr, item.frame.format(), 0, 0, {});  // unmap the decoder's buffer early
  draw_overlay(*canvas, item.detections, text_, item.stats);
  std::shared_ptr<const I420Image> drawn = std::move(canvas);
  if (live_view_) live_view_->publish(drawn);

  bool record = !options_.mp4_path.empty();
  {
    const std::lock_guard lock(mutex_);
    ++counters_.drawn;
    latest_ = drawn;
    record = record && error_.is_ok();
  }
  if (!record) return;
  Status status;
  if (writer_ && (drawn->width() != writer_->width() || drawn->height() != writer_->height())) {
    // The stream changed resolution: this file is finished, the recording goes on in the next.
    status = writer_->close();
    writer_.reset();
    file_start_pts_ns_ = pts;
  }
  if (!writer_ && status.is_ok()) {
    int64_t changes = 0;
    {
      const std::lock_guard lock(mutex_);
      changes = counters_.files;
    }
    OverlayWriterOptions writer_options;
    writer_options.path = overlay_recording_path(options_.mp4_path, changes);
    writer_options.width = drawn->width();
    writer_options.height = drawn->height();
    writer_options.fps = options_.fps;
    writer_options.encoder = options_.encoder;
    writer_options.bitrate_kbps = options_.bitrate_kbps;
    writer_options.bt709 = drawn->bt709;
    Result<std::unique_ptr<OverlayWriter>> writer = OverlayWriter::create(writer_options);
    if (writer.is_ok()) {
      writer_ = std::move(writer).value();
      const std::lock_guard lock(mutex_);
      encoder_name_ = writer_->encoder_name();
      ++counters_.files;
    } else {
      status = writer.status();
    }
  }
  if (writer_ && status.is_ok()) status = writer_->write(drawn, pts - file_start_pts_ns_);
  const std::lock_guard lock(mutex_);
  if (status.is_ok()) {
    ++counters_.written;
  } else if (error_.is_ok()) {
    error_ = status;
  }
}

Status OverlayOutput::close() {
  {
    const std::lock_guard lock(mutex_);
    if (closed_) return error_;
    closing_ = true;
  }
  has_item_.notify_all();
  has_room_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (live_view_) live_view_->stop();
  const std::lock_guard lock(mutex_);
  closed_ = true;
  return error_;
}

int OverlayOutput::http_port() const {
  return live_view_ ? live_view_->port() : -1;
}

std::string OverlayOutput::encoder_name() const {
  const std::lock_guard lock(mutex_);
  return encoder_name_;
}

OverlayCounters OverlayOutput::counters() const {
  const std::lock_guard lock(mutex_);
  return counters_;
}

Status OverlayOutput::error() const {
  const std::lock_guard lock(mutex_);
  return error_;
}

std::shared_ptr<const I420Image> OverlayOutput::latest_frame() const {
  const std::lock_guard lock(mutex_);
  return latest_;
}

}  // namespace edgefuse
