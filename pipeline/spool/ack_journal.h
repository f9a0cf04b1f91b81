// Which spool sequences are finished (acknowledged, or dropped when the spool was full), persisted
// in an append-only journal so that a restart does not replay them.
//
// State: a watermark W (every sequence <= W is finished) and the set of finished sequences above W
// (acknowledgements arrive out of order when several messages are in flight). Each change appends a
// 16-byte entry to `acks.journal`:
//
//   u64 sequence | u32 kind (1: sequence finished, 2: everything <= sequence finished) | u32 crc32(first 12 bytes)
//
// A torn last entry is ignored and truncated on load. When the journal has grown well past the size
// of the state it holds, it is rewritten (temporary file + rename) as one watermark entry plus the set.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <set>
#include <string>

#include "runtime/status.h"

namespace edgefuse {

class AckJournal {
 public:
  AckJournal() = default;
  AckJournal(const AckJournal&) = delete;
  AckJournal& operator=(const AckJournal&) = delete;
  ~AckJournal();

  // Loads the journal at `path` (an absent file is an empty state) and keeps it open for appending.
  Status open(const std::filesystem::path& path, bool fsync, const std::function<void(const std::string&)>& log);

  bool is_finished(uint64_t sequence) const { return sequence <= watermark_ || above_.count(sequence) > 0; }
  uint64_t watermark() const { return watermark_; }
  // The highest sequence the journal knows of (0 when none): sequences never go below it again.
  uint64_t highest() const { return above_.empty() ? watermark_ : *above_.rbegin(); }

  // Marks one sequence finished; a sequence already finished is a no-op.
  Status finish(uint64_t sequence);
  // Marks every sequence <= `sequence` finished.
  Status finish_through(uint64_t sequence);

 private:
  void apply(uint64_t sequence, uint32_t kind);
  Status append_entry(uint64_t sequence, uint32_t kind);
  Status compact();

  std::filesystem::path path_;
  bool fsync_ = false;
  int fd_ = -1;
  uint64_t watermark_ = 0;
  std::set<uint64_t> above_;
  int64_t entries_in_file_ = 0;
};

}  // namespace edgefuse
