// EventSpool after damage: a torn last record (crash mid-write), a corrupt record and a torn
// acknowledgement journal are cut off with a log line; the spool opens and keeps working.
#include <doctest/doctest.h>

#include <fstream>

#include "pipeline/spool/spool_record.h"
#include "tests/spool/spool_test_support.h"

namespace edgefuse {
namespace {

using test::open_spool;
using test::sequences_of;
using test::TempDir;

void append_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

bool any_line_contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

void fill(const std::filesystem::path& dir, int count) {
  auto opened = open_spool(dir);
  for (int i = 1; i <= count; ++i) REQUIRE(opened.spool->append("t", "event " + std::to_string(i)).is_ok());
}

TEST_CASE("spool: a torn last record is truncated with a log line and the sequence is handed out again") {
  TempDir dir;
  fill(dir.path(), 5);
  const auto segments = test::segment_files(dir.path());
  REQUIRE(segments.size() == 1);
  const auto intact_size = std::filesystem::file_size(segments[0]);
  std::string torn;
  encode_record(6, "t", "event 6, never finished", torn);
  for (size_t keep : {size_t{3}, size_t{10}, torn.size() - 1}) {
    CAPTURE(keep);
    append_bytes(segments[0], torn.substr(0, keep));
    auto reopened = open_spool(dir.path());
    CHECK(any_line_contains(*reopened.log_lines, "truncating " + std::to_string(keep) + " bytes"));
    CHECK(std::filesystem::file_size(segments[0]) == intact_size);
    CHECK(sequences_of(reopened.spool->unacknowledged(0, 100)) == std::vector<uint64_t>{1, 2, 3, 4, 5});
    CHECK(reopened.spool->last_sequence() == 5);
  }
  auto reopened = open_spool(dir.path());
  auto next = reopened.spool->append("t", "event 6");
  REQUIRE(next.is_ok());
  CHECK(*next == 6);
}

TEST_CASE("spool: a record with a bad checksum ends the valid data of its segment") {
  TempDir dir;
  fill(dir.path(), 5);
  const auto segment = test::segment_files(dir.path()).at(0);
  const auto size = std::filesystem::file_size(segment);
  {
    // The last byte of the file is the last byte of event 5's payload.
    std::fstream file(segment, std::ios::binary | std::ios::in | std::ios::out);
    file.seekp(static_cast<std::streamoff>(size - 1));
    file.put('#');
  }
  auto reopened = open_spool(dir.path());
  CHECK(any_line_contains(*reopened.log_lines, "checksum mismatch"));
  const auto records = reopened.spool->unacknowledged(0, 100);
  CHECK(sequences_of(records) == std::vector<uint64_t>{1, 2, 3, 4});
  CHECK(records.back().payload == "event 4");
  CHECK(std::filesystem::file_size(segment) < size);
}

TEST_CASE("spool: garbage in place of a record, and a torn acknowledgement entry, do not stop the spool") {
  TempDir dir;
  {
    auto opened = open_spool(dir.path());
    for (int i = 1; i <= 5; ++i) REQUIRE(opened.spool->append("t", "event " + std::to_string(i)).is_ok());
    REQUIRE(opened.spool->acknowledge(2).is_ok());
  }
  append_bytes(test::segment_files(dir.path()).at(0), std::string(64, '\xff'));
  append_bytes(dir.path() / "acks.journal", std::string(7, '\x01'));
  auto reopened = open_spool(dir.path());
  CHECK(any_line_contains(*reopened.log_lines, "truncating 64 bytes"));
  CHECK(any_line_contains(*reopened.log_lines, "torn or corrupt acknowledgement entries"));
  CHECK(sequences_of(reopened.spool->unacknowledged(0, 100)) == std::vector<uint64_t>{1, 3, 4, 5});
  REQUIRE(reopened.spool->acknowledge(1).is_ok());
  CHECK(reopened.spool->depth() == 3);
}

}  // namespace
}  // namespace edgefuse
