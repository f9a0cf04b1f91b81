#include "pipeline/daemon/frame_scheduler.h"

#include <doctest/doctest.h>

#include <thread>

namespace edgefuse {
namespace {

DecodedFrame numbered_frame(int64_t number) {
  DecodedFrame frame(nullptr, FramePixelFormat::kNV12, 2, 2, {});
  frame.number = number;
  return frame;
}

TEST_CASE("a full queue drops its oldest frame and counts it") {
  StreamStats stats;
  FrameScheduler scheduler({{2, &stats}}, 1, std::chrono::milliseconds(0));
  for (int64_t n = 0; n < 5; ++n) scheduler.submit(0, numbered_frame(n));
  CHECK(stats.dropped.load() == 3);
  CHECK(scheduler.queued() == 2);
  std::vector<PendingFrame> first = scheduler.next_batch();
  REQUIRE(first.size() == 1);
  CHECK(first[0].frame.number == 3);  // the freshest two survive, oldest first
  CHECK(scheduler.next_batch()[0].frame.number == 4);
}

TEST_CASE("batches take streams round-robin, oldest first within a stream") {
  StreamStats a, b;
  FrameScheduler scheduler({{8, &a}, {8, &b}}, 3, std::chrono::milliseconds(0));
  for (int64_t n = 0; n < 3; ++n) scheduler.submit(0, numbered_frame(n));
  scheduler.submit(1, numbered_frame(100));
  std::vector<PendingFrame> batch = scheduler.next_batch();
  REQUIRE(batch.size() == 3);
  CHECK(batch[0].stream == 0);
  CHECK(batch[0].frame.number == 0);
  CHECK(batch[1].stream == 1);
  CHECK(batch[1].frame.number == 100);
  CHECK(batch[2].stream == 0);
  CHECK(batch[2].frame.number == 1);
  CHECK(scheduler.queued() == 1);
  CHECK(a.dropped.load() + b.dropped.load() == 0);
}

TEST_CASE("a partial batch waits for the timeout, then goes") {
  StreamStats stats;
  FrameScheduler scheduler({{8, &stats}}, 4, std::chrono::milliseconds(300));
  scheduler.submit(0, numbered_frame(0));
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    scheduler.submit(0, numbered_frame(1));
  });
  const std::vector<PendingFrame> batch = scheduler.next_batch();
  late.join();
  // The second frame arrived well inside the 300 ms window; a scheduler that did not wait would
  // return only the first (this can only fail the other way on a machine stalled for 295 ms).
  CHECK(batch.size() == 2);
}

TEST_CASE("close drains what is queued, then returns empty; later frames count as dropped") {
  StreamStats stats;
  FrameScheduler scheduler({{4, &stats}}, 2, std::chrono::milliseconds(1000));
  scheduler.submit(0, numbered_frame(0));
  scheduler.close();
  const std::vector<PendingFrame> last = scheduler.next_batch();  // no 1 s wait once closed
  REQUIRE(last.size() == 1);
  CHECK(last[0].frame.number == 0);
  CHECK(scheduler.next_batch().empty());
  scheduler.submit(0, numbered_frame(1));
  CHECK(stats.dropped.load() == 1);
}

TEST_CASE("a worker blocked in next_batch wakes for a frame and for close") {
  StreamStats stats;
  FrameScheduler scheduler({{2, &stats}}, 1, std::chrono::milliseconds(0));
  std::vector<int64_t> seen;
  std::thread worker([&] {
    for (;;) {
      std::vector<PendingFrame> batch = scheduler.next_batch();
      if (batch.empty()) return;
      for (const PendingFrame& pending : batch) seen.push_back(pending.frame.number);
    }
  });
  scheduler.submit(0, numbered_frame(7));
  while (scheduler.queued() > 0) std::this_thread::yield();
  scheduler.close();
  worker.join();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == 7);
}

}  // namespace
}  // namespace edgefuse
