// The thread pool's cost per parallel_for: a frame runs one job per kernel (about 110 for
// YOLOX-nano, 48 for BlazeFace-128), so what a job costs beyond its chunks' work is paid that many
// times a frame. Jobs of 64 chunks (grain 1) back to back, each chunk summing `work` / 64 floats of
// a buffer that stays in L1; median over rounds of the mean time per job.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "bench/bench_common.h"
#include "runtime/thread_pool.h"

namespace edgefuse::bench {
namespace {

const cli::CommandSpec& bench_spec() {
  static const cli::CommandSpec spec{
      .name = "bench_thread_pool",
      .summary = "microseconds per ThreadPool::parallel_for, empty and with a little work, as a Markdown table",
      .usage = "[options]",
      .options =
          {
              {.name = "threads",
               .type = cli::OptionType::kInt,
               .value_name = "N",
               .default_value = "0",
               .description = "pool size of the many-threads column (the caller included); 0: one per core",
               .min = 0,
               .max = 1024},
              {.name = "calls",
               .type = cli::OptionType::kInt,
               .value_name = "N",
               .default_value = "20000",
               .description = "jobs per round",
               .min = 1,
               .max = 100000000},
              {.name = "rounds",
               .type = cli::OptionType::kInt,
               .value_name = "N",
               .default_value = "7",
               .description = "rounds; the median is reported",
               .min = 1,
               .max = 1000},
          },
  };
  return spec;
}

// Mean microseconds per job of `work` floats on a pool of `threads`, median of `rounds`.
double microseconds_per_job(int threads, int work, int calls, int rounds) {
  ThreadPool pool(threads);
  std::vector<float> data(4096, 1.0f);
  volatile float sink = 0;
  const int per_chunk = work / 64;
  const auto job = [&](int64_t begin, int64_t end) {
    float sum = 0;
    for (int64_t chunk = begin; chunk < end; ++chunk) {
      for (int i = 0; i < per_chunk; ++i) sum += data[static_cast<size_t>((chunk * per_chunk + i) & 4095)];
    }
    if (sum < 0) sink = sum;  // never true; keeps the loop
  };
  std::vector<double> means;
  for (int round = 0; round < rounds; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int call = 0; call < calls; ++call) pool.parallel_for(64, 1, job);
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    means.push_back(took.count() / calls);
  }
  std::sort(means.begin(), means.end());
  (void)sink;
  return means[means.size() / 2];
}

}  // namespace
}  // namespace edgefuse::bench

int main(int argc, char** argv) {
  using namespace edgefuse::bench;
  int exit_code = 0;
  const auto args = parse_bench_args(bench_spec(), "bench_thread_pool", argc, argv, exit_code);
  if (!args) return exit_code;
  int threads = static_cast<int>(args->get_int("threads"));
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int calls = static_cast<int>(args->get_int("calls"));
  const int rounds = static_cast<int>(args->get_int("rounds"));
  std::printf("bench_thread_pool: %s, %u hardware threads, jobs of 64 chunks, median of %d rounds of %d jobs\n\n",
              compiler_description(), std::thread::hardware_concurrency(), rounds, calls);
  std::printf("| floats read per job | 1 thread, us per job | %d threads, us per job |\n| --- | --- | --- |\n",
              threads);
  for (int work : {0, 256, 4096}) {
    std::printf("| %d | %.3f | %.3f |\n", work, microseconds_per_job(1, work, calls, rounds),
                microseconds_per_job(threads, work, calls, rounds));
  }
  return 0;
}
