// The acknowledgement journal (format in ack_journal.h).
#include "pipeline/spool/ack_journal.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "pipeline/spool/crc32.h"
#include "pipeline/spool/file_io.h"
#include "pipeline/spool/spool_record.h"

namespace edgefuse {
namespace {

constexpr uint32_t kFinishOne = 1;
constexpr uint32_t kFinishThrough = 2;
constexpr int64_t kEntryBytes = 16;
// Rewrite the journal once it holds this many entries more than its state needs.
constexpr int64_t kCompactSlack = 4096;

std::string encode_entry(uint64_t sequence, uint32_t kind) {
  std::string entry;
  put_u64(entry, sequence);
  put_u32(entry, kind);
  put_u32(entry, crc32(entry));
  return entry;
}

}  // namespace

AckJournal::~AckJournal() {
  if (fd_ >= 0) ::close(fd_);
}

Status AckJournal::open(const std::filesystem::path& path, bool fsync,
                        const std::function<void(const std::string&)>& log) {
  path_ = path;
  fsync_ = fsync;
  std::string bytes;
  EF_RETURN_IF_ERROR(read_whole_file(path, bytes, /*missing_ok=*/true));
  int64_t valid_bytes = 0;
  while (static_cast<int64_t>(bytes.size()) - valid_bytes >= kEntryBytes) {
    const char* entry = bytes.data() + valid_bytes;
    const uint32_t kind = get_u32(entry + 8);
    if (crc32(std::string_view(entry, 12)) != get_u32(entry + 12) || (kind != kFinishOne && kind != kFinishThrough)) {
      break;
    }
    apply(get_u64(entry), kind);
    valid_bytes += kEntryBytes;
    ++entries_in_file_;
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return io_error(path.string(), ": cannot open: ", std::strerror(errno));
  if (valid_bytes < static_cast<int64_t>(bytes.size())) {
    log(make_message(path.string(), ": ignoring ", static_cast<int64_t>(bytes.size()) - valid_bytes,
                     " bytes of torn or corrupt acknowledgement entries at offset ", valid_bytes));
    if (::ftruncate(fd_, valid_bytes) != 0) {
      return io_error(path.string(), ": cannot truncate: ", std::strerror(errno));
    }
  }
  if (::lseek(fd_, valid_bytes, SEEK_SET) < 0) return io_error(path.string(), ": seek failed: ", std::strerror(errno));
  return Status::ok();
}

void AckJournal::apply(uint64_t sequence, uint32_t kind) {
  if (kind == kFinishThrough) {
    if (sequence > watermark_) watermark_ = sequence;
    above_.erase(above_.begin(), above_.upper_bound(watermark_));
  } else if (sequence > watermark_) {
    above_.insert(sequence);
  }
  // Absorb the finished sequences that now continue the watermark.
  while (!above_.empty() && *above_.begin() == watermark_ + 1) {
    watermark_ = *above_.begin();
    above_.erase(above_.begin());
  }
}

Status AckJournal::finish(uint64_t sequence) {
  if (is_finished(sequence)) return Status::ok();
  apply(sequence, kFinishOne);
  return append_entry(sequence, kFinishOne);
}

Status AckJournal::finish_through(uint64_t sequence) {
  if (sequence <= watermark_) return Status::ok();
  apply(sequence, kFinishThrough);
  return append_entry(sequence, kFinishThrough);
}

Status AckJournal::append_entry(uint64_t sequence, uint32_t kind) {
  if (entries_in_file_ > kCompactSlack + 2 * static_cast<int64_t>(above_.size())) return compact();
  EF_RETURN_IF_ERROR(write_all(fd_, encode_entry(sequence, kind), path_));
  ++entries_in_file_;
  if (fsync_ && ::fdatasync(fd_) != 0) return io_error(path_.string(), ": fdatasync failed: ", std::strerror(errno));
  return Status::ok();
}

Status AckJournal::compact() {
  std::string bytes = encode_entry(watermark_, kFinishThrough);
  for (uint64_t sequence : above_) bytes += encode_entry(sequence, kFinishOne);
  const std::filesystem::path temporary = path_.string() + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error(temporary.string(), ": cannot create: ", std::strerror(errno));
  Status status = write_all(fd, bytes, temporary);
  if (status.is_ok() && fsync_ && ::fdatasync(fd) != 0) {
    status = io_error(temporary.string(), ": fdatasync failed: ", std::strerror(errno));
  }
  ::close(fd);
  EF_RETURN_IF_ERROR(status);
  // rename() replaces the journal atomically: a crash leaves either the old or the new one.
  if (::rename(temporary.c_str(), path_.c_str()) != 0) {
    return io_error(path_.string(), ": cannot replace with the compacted journal: ", std::strerror(errno));
  }
  ::close(fd_);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) return io_error(path_.string(), ": cannot reopen: ", std::strerror(errno));
  entries_in_file_ = 1 + static_cast<int64_t>(above_.size());
  return Status::ok();
}

}  // namespace edgefuse
