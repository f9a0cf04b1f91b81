// Helpers for the spool tests.
#include "tests/spool/spool_test_support.h"

#include <algorithm>

#include <stdlib.h>

namespace edgefuse::test {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "edgefuse-spool-test-XXXXXX").string();
  REQUIRE(mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

OpenedSpool open_spool(const std::filesystem::path& dir, int64_t max_bytes, int64_t segment_bytes) {
  OpenedSpool opened;
  SpoolOptions options;
  options.dir = dir;
  options.max_bytes = max_bytes;
  options.segment_bytes = segment_bytes;
  auto lines = opened.log_lines;
  options.log = [lines](const std::string& line) { lines->push_back(line); };
  auto spool = EventSpool::open(std::move(options));
  REQUIRE_MESSAGE(spool.is_ok(), spool.status().to_string());
  opened.spool = std::move(spool).value();
  return opened;
}

std::vector<uint64_t> sequences_of(const std::vector<SpoolRecord>& records) {
  std::vector<uint64_t> sequences;
  for (const SpoolRecord& record : records) sequences.push_back(record.sequence);
  return sequences;
}

std::vector<std::filesystem::path> segment_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().starts_with("segment-")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace edgefuse::test
