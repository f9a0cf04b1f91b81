#include "bench/core_traffic.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace edgefuse::bench {
namespace {

using Clock = std::chrono::steady_clock;

enum class Split { kOwnSlice, kCutPlanes, kOtherSlice };

// y = x / 2 + 1/4 over [begin, end): the values settle at 1/2, never denormal. AVX-512 where the
// CPU has it, so that the pass is bound by the cache traffic rather than by the loop.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "default")))
#endif
void pointwise_pass(const float* x, float* y, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) y[i] = x[i] * 0.5f + 0.25f;
}

// Spinning barrier: the threads wait microseconds at most, far less than a futex wake costs.
class SpinBarrier {
 public:
  explicit SpinBarrier(int threads) : threads_(threads) {}
  void arrive_and_wait() {
    const int generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.store(generation + 1, std::memory_order_release);
      return;
    }
    while (generation_.load(std::memory_order_acquire) == generation) {
    }
  }

 private:
  const int threads_;
  std::atomic<int> arrived_{0};
  std::atomic<int> generation_{0};
};

// Thread t's part of pass p under `split`.
void run_share(const CoreTrafficOptions& o, Split split, int t, int pass, const float* x, float* y) {
  const int64_t total = o.planes * o.plane_floats;
  const auto slice = [&](int s) { pointwise_pass(x, y, total * s / o.threads, total * (s + 1) / o.threads); };
  switch (split) {
    case Split::kOwnSlice:
      slice(t);
      break;
    case Split::kOtherSlice:
      slice((t + pass) % o.threads);
      break;
    case Split::kCutPlanes:
      for (int64_t plane = 0; plane < o.planes; ++plane) {
        const int64_t base = plane * o.plane_floats;
        pointwise_pass(x, y, base + o.plane_floats * t / o.threads, base + o.plane_floats * (t + 1) / o.threads);
      }
      break;
  }
}

double median_gbs(const CoreTrafficOptions& o, Split split, std::vector<float>& a, std::vector<float>& b) {
  SpinBarrier barrier(o.threads);
  std::vector<double> seconds;
  auto work = [&](int t) {
    // One untimed run first: the buffers' pages and lines reach the split's steady state.
    for (int run = 0; run <= o.runs; ++run) {
      barrier.arrive_and_wait();
      const auto start = Clock::now();
      for (int pass = 0; pass < o.passes; ++pass) {
        const bool even = pass % 2 == 0;
        run_share(o, split, t, pass, even ? a.data() : b.data(), even ? b.data() : a.data());
        barrier.arrive_and_wait();
      }
      if (t == 0 && run > 0) seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
  };
  std::vector<std::thread> others;
  for (int t = 1; t < o.threads; ++t) others.emplace_back(work, t);
  work(0);
  for (auto& thread : others) thread.join();
  const double bytes = 2.0 * static_cast<double>(o.planes * o.plane_floats) * sizeof(float) * o.passes;
  std::sort(seconds.begin(), seconds.end());
  return bytes / seconds[seconds.size() / 2] * 1e-9;
}

}  // namespace

CoreTrafficFigures measure_core_traffic(const CoreTrafficOptions& options) {
  CoreTrafficFigures figures;
  if (options.threads < 2 || options.planes < 1 || options.plane_floats < options.threads || options.runs < 1) {
    return figures;
  }
  const auto floats = static_cast<size_t>(options.planes * options.plane_floats);
  std::vector<float> a(floats, 1.0f), b(floats, 1.0f);
  figures.own_slice = median_gbs(options, Split::kOwnSlice, a, b);
  figures.cut_planes = median_gbs(options, Split::kCutPlanes, a, b);
  figures.other_slice = median_gbs(options, Split::kOtherSlice, a, b);
  return figures;
}

}  // namespace edgefuse::bench
