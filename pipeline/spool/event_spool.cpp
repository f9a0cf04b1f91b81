// EventSpool: segment files, the in-memory index of unacknowledged records, and the size bound.
#include "pipeline/spool/event_spool.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iterator>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "pipeline/spool/file_io.h"

namespace edgefuse {
namespace {

constexpr char kSegmentPrefix[] = "segment-";
constexpr char kSegmentSuffix[] = ".log";
constexpr size_t kSequenceDigits = 20;

std::filesystem::path segment_path(const std::filesystem::path& dir, uint64_t first_sequence) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s%020" PRIu64 "%s", kSegmentPrefix, first_sequence, kSegmentSuffix);
  return dir / name;
}

// The first sequence encoded in a segment file name, or 0 when the name is not a segment's.
uint64_t parse_segment_name(const std::string& name) {
  const size_t prefix = std::strlen(kSegmentPrefix);
  if (name.size() != prefix + kSequenceDigits + std::strlen(kSegmentSuffix)) return 0;
  if (name.compare(0, prefix, kSegmentPrefix) != 0 || !name.ends_with(kSegmentSuffix)) return 0;
  uint64_t value = 0;
  for (size_t i = prefix; i < prefix + kSequenceDigits; ++i) {
    if (name[i] < '0' || name[i] > '9') return 0;
    value = value * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  return value;
}

Status sync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error(dir.string(), ": cannot open for fsync: ", std::strerror(errno));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return io_error(dir.string(), ": fsync failed: ", std::strerror(errno));
  return Status::ok();
}

}  // namespace

EventSpool::EventSpool(SpoolOptions options) : options_(std::move(options)) {}

EventSpool::~EventSpool() {
  close_active();
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

void EventSpool::log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "edgefuse: spool: %s\n", line.c_str());
  }
}

Result<std::unique_ptr<EventSpool>> EventSpool::open(SpoolOptions options) {
  if (options.dir.empty()) return invalid_argument("spool: dir is empty");
  if (options.max_bytes < 4096) return invalid_argument("spool: max_bytes ", options.max_bytes, " is below 4096");
  if (options.segment_bytes <= 0) return invalid_argument("spool: segment_bytes must be positive");
  // At least four segments within the bound, so dropping the oldest frees a small share of it.
  options.segment_bytes = std::min(options.segment_bytes, options.max_bytes / 4);

  std::error_code error;
  std::filesystem::create_directories(options.dir, error);
  if (error) return io_error(options.dir.string(), ": cannot create the spool folder: ", error.message());

  std::unique_ptr<EventSpool> spool(new EventSpool(std::move(options)));
  const std::filesystem::path lock_path = spool->options_.dir / "lock";
  spool->lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (spool->lock_fd_ < 0) return io_error(lock_path.string(), ": cannot open: ", std::strerror(errno));
  if (::flock(spool->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return io_error(spool->options_.dir.string(), ": spool is in use by another process (", std::strerror(errno), ")");
  }
  EF_RETURN_IF_ERROR(spool->acks_.open(spool->options_.dir / "acks.journal", spool->options_.fsync,
                                       [&spool](const std::string& line) { spool->log(line); }));
  EF_RETURN_IF_ERROR(spool->load());
  return spool;
}

Status EventSpool::load() {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(options_.dir, error)) {
    const uint64_t first = parse_segment_name(entry.path().filename().string());
    if (first == 0) continue;
    Segment segment;
    segment.path = entry.path();
    segment.first_sequence = first;
    segment.last_sequence = first - 1;
    segments_.emplace(first, segment);
  }
  if (error) return io_error(options_.dir.string(), ": cannot list: ", error.message());

  uint64_t previous_sequence = 0;
  uint64_t highest = acks_.highest();
  for (auto& [first, segment] : segments_) {
    EF_RETURN_IF_ERROR(load_segment(segment, previous_sequence));
    highest = std::max(highest, std::max(segment.last_sequence, first - 1));
    bytes_ += segment.bytes;
  }
  next_sequence_ = highest + 1;

  for (auto it = segments_.begin(); it != segments_.end();) {
    auto next = std::next(it);
    if (it->second.finished == it->second.records) delete_segment(it);
    it = next;
  }
  // Sequences neither on disk nor finished were lost to corruption (or never handed out): finish
  // them so that they do not pin the watermark forever.
  const uint64_t oldest_open = unacked_.empty() ? next_sequence_ : unacked_.begin()->first;
  EF_RETURN_IF_ERROR(acks_.finish_through(oldest_open - 1));
  uint64_t expected = oldest_open;
  for (auto it = unacked_.begin();; ++it) {
    const uint64_t present = it == unacked_.end() ? next_sequence_ : it->first;
    for (uint64_t missing = expected; missing < present; ++missing) EF_RETURN_IF_ERROR(acks_.finish(missing));
    if (it == unacked_.end()) break;
    expected = present + 1;
  }
  if (!unacked_.empty()) {
    log(make_message("replaying ", unacked_.size(), " unacknowledged events (sequences ", unacked_.begin()->first, "..",
                     unacked_.rbegin()->first, ") from ", options_.dir.string()));
  }
  return Status::ok();
}

Status EventSpool::load_segment(Segment& segment, uint64_t& previous_sequence) {
  std::string bytes;
  EF_RETURN_IF_ERROR(read_whole_file(segment.path, bytes, /*missing_ok=*/false));
  int64_t offset = 0;
  std::string problem;
  while (offset < static_cast<int64_t>(bytes.size())) {
    int64_t consumed = 0;
    std::optional<SpoolRecord> record =
        decode_record(std::string_view(bytes).substr(static_cast<size_t>(offset)), consumed, problem);
    if (!record) break;
    const uint64_t expected = segment.records == 0 ? segment.first_sequence : segment.last_sequence + 1;
    if (record->sequence != expected || record->sequence <= previous_sequence) {
      problem = make_message("sequence ", record->sequence, " where ", expected, " was expected");
      break;
    }
    if (acks_.is_finished(record->sequence)) {
      ++segment.finished;
    } else {
      unacked_[record->sequence] = Location{segment.first_sequence, offset, consumed};
    }
    ++segment.records;
    segment.last_sequence = record->sequence;
    previous_sequence = record->sequence;
    offset += consumed;
  }
  segment.bytes = offset;
  if (offset < static_cast<int64_t>(bytes.size())) {
    log(make_message(segment.path.string(), ": torn or corrupt record at offset ", offset, " (", problem,
                     "): truncating ", static_cast<int64_t>(bytes.size()) - offset, " bytes"));
    if (::truncate(segment.path.c_str(), offset) != 0) {
      return io_error(segment.path.string(), ": cannot truncate: ", std::strerror(errno));
    }
  }
  return Status::ok();
}

void EventSpool::close_active() {
  if (active_fd_ < 0) return;
  ::close(active_fd_);
  active_fd_ = -1;
  // Completed segments are deleted on their last acknowledgement; the active one waits until now so
  // a quickly acknowledged stream does not create and delete a file per event.
  auto newest = std::prev(segments_.end());
  if (newest->second.finished == newest->second.records) delete_segment(newest);
}

void EventSpool::delete_segment(std::map<uint64_t, Segment>::iterator it) {
  std::error_code error;
  std::filesystem::remove(it->second.path, error);
  if (error) log(make_message(it->second.path.string(), ": cannot delete: ", error.message()));
  bytes_ -= it->second.bytes;
  segments_.erase(it);
}

Status EventSpool::start_segment(uint64_t first_sequence) {
  Segment segment;
  segment.path = segment_path(options_.dir, first_sequence);
  segment.first_sequence = first_sequence;
  segment.last_sequence = first_sequence - 1;
  active_fd_ = ::open(segment.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (active_fd_ < 0) return io_error(segment.path.string(), ": cannot create: ", std::strerror(errno));
  segments_[first_sequence] = segment;
  if (options_.fsync) return sync_directory(options_.dir);
  return Status::ok();
}

Status EventSpool::make_room(int64_t record_bytes) {
  while (bytes_ + record_bytes > options_.max_bytes && !segments_.empty()) {
    auto oldest = segments_.begin();
    if (active_fd_ >= 0 && std::next(oldest) == segments_.end()) {
      ::close(active_fd_);
      active_fd_ = -1;
    }
    const Segment& segment = oldest->second;
    const int64_t lost = segment.records - segment.finished;
    // Journal first: after a crash right here the segment's sequences must not come back.
    EF_RETURN_IF_ERROR(acks_.finish_through(segment.last_sequence));
    unacked_.erase(unacked_.lower_bound(segment.first_sequence), unacked_.upper_bound(segment.last_sequence));
    dropped_ += lost;
    log(make_message("spool full (max_bytes ", options_.max_bytes, "): deleted ", segment.path.filename().string(),
                     " with ", lost, " unacknowledged events (", dropped_, " dropped since start)"));
    delete_segment(oldest);
  }
  return Status::ok();
}

Result<uint64_t> EventSpool::append(std::string_view topic, std::string_view payload) {
  const int64_t record_bytes = encoded_record_bytes(topic, payload);
  if (record_bytes > options_.max_bytes) {
    return invalid_argument("spool: event of ", record_bytes, " bytes exceeds max_bytes ", options_.max_bytes);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  EF_RETURN_IF_ERROR(make_room(record_bytes));
  if (active_fd_ >= 0) {
    const Segment& active = segments_.rbegin()->second;
    if (active.records > 0 && active.bytes + record_bytes > options_.segment_bytes) close_active();
  }
  if (active_fd_ < 0) EF_RETURN_IF_ERROR(start_segment(next_sequence_));

  Segment& segment = segments_.rbegin()->second;
  const uint64_t sequence = next_sequence_;
  std::string encoded;
  encoded.reserve(static_cast<size_t>(record_bytes));
  encode_record(sequence, topic, payload, encoded);
  // One write() per record keeps the torn window to a single record; a failed write is cut off again.
  if (Status written = write_all(active_fd_, encoded, segment.path); !written.is_ok()) {
    if (::ftruncate(active_fd_, segment.bytes) != 0) close_active();
    return written;
  }
  if (options_.fsync && ::fdatasync(active_fd_) != 0) {
    return io_error(segment.path.string(), ": fdatasync failed: ", std::strerror(errno));
  }
  unacked_[sequence] = Location{segment.first_sequence, segment.bytes, record_bytes};
  segment.bytes += record_bytes;
  segment.records += 1;
  segment.last_sequence = sequence;
  bytes_ += record_bytes;
  ++next_sequence_;
  return sequence;
}

std::vector<SpoolRecord> EventSpool::unacknowledged(uint64_t after_sequence, size_t max_count) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<SpoolRecord> records;
  int read_fd = -1;
  uint64_t read_segment = 0;
  for (auto it = unacked_.upper_bound(after_sequence); it != unacked_.end() && records.size() < max_count; ++it) {
    const Location& location = it->second;
    const Segment& segment = segments_.at(location.segment);
    if (read_fd < 0 || read_segment != location.segment) {
      if (read_fd >= 0) ::close(read_fd);
      read_fd = ::open(segment.path.c_str(), O_RDONLY | O_CLOEXEC);
      read_segment = location.segment;
      if (read_fd < 0) {
        log(make_message(segment.path.string(), ": cannot open for reading: ", std::strerror(errno)));
        break;
      }
    }
    std::string bytes(static_cast<size_t>(location.bytes), '\0');
    const ssize_t n = ::pread(read_fd, bytes.data(), bytes.size(), location.offset);
    int64_t consumed = 0;
    std::string problem = "short read";
    std::optional<SpoolRecord> record;
    if (n == static_cast<ssize_t>(bytes.size())) record = decode_record(bytes, consumed, problem);
    if (!record || record->sequence != it->first) {
      log(make_message(segment.path.string(), ": cannot read back sequence ", it->first, " at offset ", location.offset,
                       " (", problem, ")"));
      break;
    }
    records.push_back(std::move(*record));
  }
  if (read_fd >= 0) ::close(read_fd);
  return records;
}

Status EventSpool::acknowledge(uint64_t sequence) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (sequence == 0 || sequence >= next_sequence_) {
    return invalid_argument("spool: acknowledged sequence ", sequence, " was never handed out (last is ",
                            next_sequence_ - 1, ")");
  }
  if (acks_.is_finished(sequence)) return Status::ok();
  EF_RETURN_IF_ERROR(acks_.finish(sequence));
  auto found = unacked_.find(sequence);
  if (found == unacked_.end()) return Status::ok();
  auto segment = segments_.find(found->second.segment);
  unacked_.erase(found);
  segment->second.finished += 1;
  const bool is_active = active_fd_ >= 0 && std::next(segment) == segments_.end();
  if (!is_active && segment->second.finished == segment->second.records) delete_segment(segment);
  return Status::ok();
}

int64_t EventSpool::depth() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(unacked_.size());
}

int64_t EventSpool::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

int64_t EventSpool::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

uint64_t EventSpool::last_sequence() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_sequence_ - 1;
}

}  // namespace edgefuse
