// EventSpool: append, acknowledge (in and out of order), reopen and replay, and the size bound.
#include <doctest/doctest.h>

#include <numeric>

#include "tests/spool/spool_test_support.h"

namespace edgefuse {
namespace {

using test::open_spool;
using test::sequences_of;
using test::TempDir;

std::vector<uint64_t> range(uint64_t first, uint64_t last) {
  std::vector<uint64_t> values(last - first + 1);
  std::iota(values.begin(), values.end(), first);
  return values;
}

TEST_CASE("spool: appended events come back in order with their topic and payload until acknowledged") {
  TempDir dir;
  {
    auto opened = open_spool(dir.path());
    EventSpool& spool = *opened.spool;
    for (int i = 1; i <= 10; ++i) {
      auto sequence = spool.append("edgefuse/cam" + std::to_string(i % 2) + "/events", "payload " + std::to_string(i));
      REQUIRE(sequence.is_ok());
      CHECK(*sequence == static_cast<uint64_t>(i));
    }
    CHECK(spool.depth() == 10);
    for (uint64_t sequence = 1; sequence <= 5; ++sequence) REQUIRE(spool.acknowledge(sequence).is_ok());
    CHECK(spool.depth() == 5);
    const auto records = spool.unacknowledged(0, 100);
    CHECK(sequences_of(records) == range(6, 10));
    CHECK(records[0].topic == "edgefuse/cam0/events");
    CHECK(records[0].payload == "payload 6");
    CHECK(records[4].payload == "payload 10");
  }
  auto reopened = open_spool(dir.path());
  CHECK(reopened.spool->depth() == 5);
  const auto records = reopened.spool->unacknowledged(0, 100);
  CHECK(sequences_of(records) == range(6, 10));
  CHECK(records[1].topic == "edgefuse/cam1/events");
  CHECK(records[1].payload == "payload 7");
  // Sequences continue after the restart, never reused.
  auto next = reopened.spool->append("t", "after restart");
  REQUIRE(next.is_ok());
  CHECK(*next == 11);
  CHECK(reopened.spool->last_sequence() == 11);
}

TEST_CASE("spool: out-of-order acknowledgements survive a reopen and free fully acknowledged segments") {
  TempDir dir;
  const std::string payload(100, 'x');  // 121 bytes on disk with topic "t": 8 records per 1024-byte segment
  {
    auto opened = open_spool(dir.path(), 64 << 20, 1024);
    EventSpool& spool = *opened.spool;
    for (int i = 0; i < 20; ++i) REQUIRE(spool.append("t", payload).is_ok());
    CHECK(test::segment_files(dir.path()).size() == 3);
    // The second segment (9..16) acknowledged backwards, the first partly, as several in-flight PUBACKs would.
    for (uint64_t sequence = 16; sequence >= 9; --sequence) REQUIRE(spool.acknowledge(sequence).is_ok());
    REQUIRE(spool.acknowledge(3).is_ok());
    REQUIRE(spool.acknowledge(1).is_ok());
    CHECK(test::segment_files(dir.path()).size() == 2);
    CHECK(spool.depth() == 10);
    // Repeats are no-ops; a sequence never handed out is an error.
    CHECK(spool.acknowledge(3).is_ok());
    CHECK(spool.acknowledge(12).is_ok());
    CHECK(spool.depth() == 10);
    CHECK_FALSE(spool.acknowledge(0).is_ok());
    CHECK_FALSE(spool.acknowledge(21).is_ok());
  }
  auto reopened = open_spool(dir.path(), 64 << 20, 1024);
  EventSpool& spool = *reopened.spool;
  const std::vector<uint64_t> expected = {2, 4, 5, 6, 7, 8, 17, 18, 19, 20};
  CHECK(sequences_of(spool.unacknowledged(0, 100)) == expected);
  CHECK(sequences_of(spool.unacknowledged(5, 3)) == std::vector<uint64_t>{6, 7, 8});
  CHECK(sequences_of(spool.unacknowledged(8, 100)) == range(17, 20));
  for (uint64_t sequence : expected) REQUIRE(spool.acknowledge(sequence).is_ok());
  CHECK(spool.depth() == 0);
  CHECK(test::segment_files(dir.path()).size() <= 1);  // at most the still-open newest segment
}

TEST_CASE("spool: without acknowledgements a reopen replays everything, in order") {
  TempDir dir;
  {
    auto opened = open_spool(dir.path(), 64 << 20, 4096);
    for (int i = 1; i <= 500; ++i) REQUIRE(opened.spool->append("t", "event " + std::to_string(i)).is_ok());
  }
  auto reopened = open_spool(dir.path(), 64 << 20, 4096);
  const auto records = reopened.spool->unacknowledged(0, 1000);
  REQUIRE(records.size() == 500);
  CHECK(sequences_of(records) == range(1, 500));
  for (const SpoolRecord& record : records) CHECK(record.payload == "event " + std::to_string(record.sequence));
  CHECK(sequences_of(reopened.spool->unacknowledged(250, 10)) == range(251, 260));
  REQUIRE_FALSE(reopened.log_lines->empty());
  CHECK(reopened.log_lines->front().find("replaying 500 unacknowledged events") != std::string::npos);
}

TEST_CASE("spool: when full the oldest segments are dropped and every dropped event is counted and logged") {
  TempDir dir;
  const std::string payload(100, 'x');                  // 121 bytes per record
  auto opened = open_spool(dir.path(), 4096, 1 << 20);  // segment_bytes clamps to 1024: 8 records each
  EventSpool& spool = *opened.spool;
  const int appended = 100;
  for (int i = 0; i < appended; ++i) {
    REQUIRE(spool.append("t", payload).is_ok());
    CHECK(spool.bytes() <= 4096);
    // Two events of the first segment are acknowledged before it is dropped: they are not counted as lost.
    if (i == 3) {
      REQUIRE(spool.acknowledge(2).is_ok());
      REQUIRE(spool.acknowledge(3).is_ok());
    }
  }
  const int64_t depth = spool.depth();
  CHECK(depth >= 25);
  CHECK(spool.dropped() == appended - 2 - depth);
  // What remains is the newest events, contiguous.
  CHECK(sequences_of(spool.unacknowledged(0, 1000)) == range(appended - depth + 1, appended));
  // The log lines account for every dropped event.
  int64_t logged = 0;
  for (const std::string& line : *opened.log_lines) {
    // "... deleted segment-<n>.log with <count> unacknowledged events ..."
    const size_t deleted = line.find("deleted segment-");
    const size_t with = line.find(".log with ", deleted);
    if (deleted == std::string::npos || with == std::string::npos) continue;
    logged += std::stoll(line.substr(with + 10));
    CHECK(line.find(" unacknowledged events", with) != std::string::npos);
  }
  CHECK(logged == spool.dropped());
  // An event larger than the whole bound is refused, not silently dropped.
  CHECK_FALSE(spool.append("t", std::string(5000, 'y')).is_ok());
  // Acknowledging a dropped event is a no-op.
  CHECK(spool.acknowledge(1).is_ok());
}

TEST_CASE("spool: a second process (or instance) cannot open the same folder") {
  TempDir dir;
  auto first = open_spool(dir.path());
  SpoolOptions options;
  options.dir = dir.path();
  auto second = EventSpool::open(options);
  REQUIRE_FALSE(second.is_ok());
  CHECK(second.status().message().find("in use") != std::string::npos);
}

}  // namespace
}  // namespace edgefuse

namespace edgefuse {
namespace {

TEST_CASE("spool: with fsync on, appends and acknowledgements behave the same") {
  test::TempDir dir;
  SpoolOptions options;
  options.dir = dir.path();
  options.fsync = true;
  options.log = [](std::string) {};
  {
    auto spool = EventSpool::open(options);
    REQUIRE(spool.is_ok());
    for (int i = 1; i <= 20; ++i) REQUIRE((*spool)->append("t", "event " + std::to_string(i)).is_ok());
    for (uint64_t sequence = 1; sequence <= 20; sequence += 2) REQUIRE((*spool)->acknowledge(sequence).is_ok());
  }
  auto spool = EventSpool::open(options);
  REQUIRE(spool.is_ok());
  const auto records = (*spool)->unacknowledged(0, 100);
  REQUIRE(records.size() == 10);
  CHECK(records.front().sequence == 2);
  CHECK(records.back().payload == "event 20");
}

TEST_CASE("spool: the acknowledgement journal stays small over many out-of-order acknowledgements") {
  test::TempDir dir;
  const int count = 20000;
  {
    auto opened = test::open_spool(dir.path());
    for (int i = 1; i <= count; ++i) REQUIRE(opened.spool->append("t", "e").is_ok());
    // Evens first (the set above the watermark grows to 10000), then odds (it collapses).
    for (uint64_t sequence = 2; sequence <= count; sequence += 2) REQUIRE(opened.spool->acknowledge(sequence).is_ok());
    CHECK(opened.spool->depth() == count / 2);
    for (uint64_t sequence = 1; sequence <= count; sequence += 2) REQUIRE(opened.spool->acknowledge(sequence).is_ok());
    CHECK(opened.spool->depth() == 0);
  }
  // 40000 acknowledgements of 16 bytes would be 640 kB without compaction.
  CHECK(std::filesystem::file_size(dir.path() / "acks.journal") < 16 * 20000);
  auto reopened = test::open_spool(dir.path());
  CHECK(reopened.spool->depth() == 0);
  CHECK(test::segment_files(dir.path()).empty());
  auto next = reopened.spool->append("t", "e");
  REQUIRE(next.is_ok());
  CHECK(*next == count + 1);
}

}  // namespace
}  // namespace edgefuse
