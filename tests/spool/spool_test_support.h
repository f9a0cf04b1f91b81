// Helpers for the spool tests: a temporary folder removed on scope exit, and a spool opened with a
// log callback that collects its lines.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/spool/event_spool.h"

namespace edgefuse::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct OpenedSpool {
  std::unique_ptr<EventSpool> spool;
  std::shared_ptr<std::vector<std::string>> log_lines = std::make_shared<std::vector<std::string>>();
};

// Opens the spool in `dir` (asserting success) with the given bounds; log lines are collected.
OpenedSpool open_spool(const std::filesystem::path& dir, int64_t max_bytes = 64 << 20, int64_t segment_bytes = 4 << 20);

// The sequences of `records`, in order.
std::vector<uint64_t> sequences_of(const std::vector<SpoolRecord>& records);

// Files in `dir` whose names start with "segment-".
std::vector<std::filesystem::path> segment_files(const std::filesystem::path& dir);

}  // namespace edgefuse::test
