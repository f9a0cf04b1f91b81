#include "pipeline/overlay/snapshot_writer.h"

#include <algorithm>
#include <fstream>
#include <system_error>

#include "pipeline/overlay/i420_image.h"

namespace edgefuse {
namespace {

constexpr std::string_view kExtension = ".jpg";

}  // namespace

Result<std::unique_ptr<SnapshotWriter>> SnapshotWriter::create(SnapshotOptions options) {
  if (options.quality < 1 || options.quality > 100) {
    return invalid_argument("snapshots: quality ", options.quality, " outside 1..100");
  }
  if (options.queue_size < 1 || options.queue_size > 64) {
    return invalid_argument("snapshots: queue_size ", options.queue_size, " outside 1..64");
  }
  if (options.max_bytes < 1) return invalid_argument("snapshots: max_bytes must be positive");
  std::error_code error;
  std::filesystem::create_directories(options.folder, error);
  if (error || !std::filesystem::is_directory(options.folder)) {
    return io_error("snapshots: cannot create folder ", options.folder.string(), ": ", error.message());
  }
  std::unique_ptr<SnapshotWriter> writer(new SnapshotWriter(std::move(options)));
  // Snapshots of earlier runs count against the limit too, oldest first.
  std::vector<std::pair<std::filesystem::file_time_type, SnapshotWriter::Stored>> found;
  for (const auto& entry : std::filesystem::directory_iterator(writer->options_.folder, error)) {
    if (!entry.is_regular_file(error) || entry.path().extension() != kExtension) continue;
    const auto bytes = static_cast<int64_t>(entry.file_size(error));
    found.push_back({entry.last_write_time(error), {entry.path(), bytes}});
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [time, stored] : found) {
    writer->stored_bytes_ += stored.bytes;
    writer->stored_.push_back(std::move(stored));
  }
  writer->keep_under_limit();
  writer->worker_ = std::thread([self = writer.get()] { self->run(); });
  return writer;
}

SnapshotWriter::~SnapshotWriter() {
  close();
}

std::filesystem::path SnapshotWriter::submit(const DecodedFrame& frame, std::vector<Detection> detections,
                                             const std::string& name) {
  std::filesystem::path path = options_.folder / (name + std::string(kExtension));
  {
    const std::lock_guard lock(mutex_);
    if (closing_) return {};
    if (static_cast<int>(queue_.size()) >= options_.queue_size) {
      // This one, not a queued one: those are already named by their events.
      ++counters_.dropped;
      return {};
    }
    queue_.push_back({frame, std::move(detections), path});
  }
  has_item_.notify_one();
  return path;
}

void SnapshotWriter::close() {
  {
    const std::lock_guard lock(mutex_);
    closing_ = true;
  }
  has_item_.notify_all();
  if (worker_.joinable()) worker_.join();
}

SnapshotCounters SnapshotWriter::counters() const {
  const std::lock_guard lock(mutex_);
  return counters_;
}

Status SnapshotWriter::error() const {
  const std::lock_guard lock(mutex_);
  return error_;
}

void SnapshotWriter::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    has_item_.wait(lock, [this] { return closing_ || !queue_.empty(); });
    if (queue_.empty()) return;  // closing and drained
    Item item = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    const Status written = write(item);
    lock.lock();
    if (written.is_ok()) {
      ++counters_.written;
    } else {
      ++counters_.failed;
      if (error_.is_ok()) error_ = written;
    }
  }
}

Status SnapshotWriter::write(Item& item) {
  I420Image canvas;
  copy_to_i420(item.frame, canvas);
  item.frame = DecodedFrame(nullptr, item.frame.format(), 0, 0, {});  // unmap the decoder's buffer early
  draw_overlay(canvas, item.detections, options_.text, {});
  const std::vector<uint8_t> jpeg = encode_jpeg(canvas, options_.quality);
  if (jpeg.empty()) return io_error("snapshots: JPEG encoding failed for ", item.path.string());
  // Whole or not at all: readers watching the folder never open a half-written image.
  std::filesystem::path partial = item.path;
  partial += ".part";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(jpeg.data()), static_cast<std::streamsize>(jpeg.size()));
    if (!out) return io_error("snapshots: cannot write ", partial.string());
  }
  std::error_code error;
  std::filesystem::rename(partial, item.path, error);
  if (error) return io_error("snapshots: cannot rename ", partial.string(), ": ", error.message());
  stored_.push_back({item.path, static_cast<int64_t>(jpeg.size())});
  stored_bytes_ += static_cast<int64_t>(jpeg.size());
  keep_under_limit();
  return Status::ok();
}

void SnapshotWriter::keep_under_limit() {
  // The newest always stays, even alone over the limit.
  while (stored_bytes_ > options_.max_bytes && stored_.size() > 1) {
    std::error_code error;
    std::filesystem::remove(stored_.front().path, error);
    stored_bytes_ -= stored_.front().bytes;
    stored_.pop_front();
    const std::lock_guard lock(mutex_);
    ++counters_.removed;
  }
}

}  // namespace edgefuse
