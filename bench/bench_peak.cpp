// The machine's roofline: peak f32 arithmetic (independent FMA chains held in registers, per
// instruction set the CPU has) and memory bandwidth (read, write, copy, triad over buffers far
// larger than the caches), on one thread and on every core, and what reading another core's
// writes costs (bench/core_traffic.h). Kernel figures elsewhere in bench/RESULTS.md are read
// against these: a Conv at 40 % of FMA peak, a pointwise op at 80 % of bandwidth, a Conv that
// gains little from a second thread against the traffic between cores. Each peak is the best of
// --runs repetitions (what the hardware can do; the best run is the one least disturbed by other
// load on a shared machine); the between-cores figures are medians.
//
//   bench_peak [--runs N] [--threads N] [--buffer-mb N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_common.h"
#include "bench/core_traffic.h"
#include "pipeline/cli/args.h"
#include "runtime/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace edgefuse::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Enough independent accumulators to cover FMA latency (4 cycles) x issue ports (2) on current
// x86 cores, so the loop is bound by FMA throughput alone.
constexpr int kChains = 12;
constexpr int64_t kIterations = 20'000'000;

#if defined(__x86_64__)
__attribute__((target("avx512f"))) float fma_chains_avx512(int64_t iterations) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  const __m512 scale = _mm512_set1_ps(0.999999f), offset = _mm512_set1_ps(1e-6f);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], scale, offset);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  // Stored and summed by hand: GCC 12 warns inside _mm512_reduce_add_ps.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

__attribute__((target("avx2,fma"))) float fma_chains_avx2(int64_t iterations) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  const __m256 scale = _mm256_set1_ps(0.999999f), offset = _mm256_set1_ps(1e-6f);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], scale, offset);
  }
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

// SSE2 has no FMA: a multiply and an add, two flops per lane per step all the same.
float mul_add_chains_sse2(int64_t iterations) {
  __m128 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm_set1_ps(static_cast<float>(c));
  const __m128 scale = _mm_set1_ps(0.999999f), offset = _mm_set1_ps(1e-6f);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm_add_ps(_mm_mul_ps(acc[c], scale), offset);
  }
  __m128 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm_add_ps(sum, acc[c]);
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, sum);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}
#endif

struct ArithmeticKernel {
  const char* name;
  int lanes;  // f32 lanes per vector
  std::function<float(int64_t)> run;
};

std::vector<ArithmeticKernel> arithmetic_kernels() {
  std::vector<ArithmeticKernel> kernels;
#if defined(__x86_64__)
  kernels.push_back({"SSE2 mul+add (portable)", 4, mul_add_chains_sse2});
  if (cpu_isa_supported(CpuIsa::kAvx2)) kernels.push_back({"AVX2 FMA", 8, fma_chains_avx2});
  if (cpu_isa_supported(CpuIsa::kAvx512)) kernels.push_back({"AVX-512 FMA", 16, fma_chains_avx512});
#endif
  return kernels;
}

// Runs `work` on `threads` threads at once; wall seconds from the first start to the last end.
double run_parallel(int threads, const std::function<void(int)>& work) {
  std::vector<std::thread> pool;
  const auto start = Clock::now();
  for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
  for (auto& thread : pool) thread.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

volatile float g_sink = 0;  // results land here so the arithmetic cannot be optimised away

double best_gflops(const ArithmeticKernel& kernel, int threads, int runs) {
  const double flops = static_cast<double>(kIterations) * kChains * kernel.lanes * 2 * threads;
  double best = 0;
  for (int run = 0; run < runs; ++run) {
    const double seconds = run_parallel(threads, [&](int) { g_sink = g_sink + kernel.run(kIterations); });
    best = std::max(best, flops / seconds * 1e-9);
  }
  return best;
}

// Memory: each thread streams over its own slice of the buffers.
struct Buffers {
  size_t floats = 0;
  std::unique_ptr<float[]> a, b, c;
};

double best_bandwidth(const char* kind, Buffers& buffers, int threads, int runs) {
  const size_t slice = buffers.floats / static_cast<size_t>(threads);
  auto work = [&](int t) {
    float* a = buffers.a.get() + slice * static_cast<size_t>(t);
    const float* b = buffers.b.get() + slice * static_cast<size_t>(t);
    const float* c = buffers.c.get() + slice * static_cast<size_t>(t);
    if (std::strcmp(kind, "read") == 0) {
      // Integer view: sums of 64-bit words vectorise without reassociating floats.
      const auto* words = reinterpret_cast<const uint64_t*>(b);
      uint64_t sum = 0;
      for (size_t i = 0; i < slice / 2; ++i) sum += words[i];
      g_sink = g_sink + static_cast<float>(sum & 1);
    } else if (std::strcmp(kind, "write") == 0) {
      std::fill(a, a + slice, 1.0f);
    } else if (std::strcmp(kind, "copy") == 0) {
      std::memcpy(a, b, slice * sizeof(float));
    } else {  // triad
      for (size_t i = 0; i < slice; ++i) a[i] = b[i] + 0.5f * c[i];
    }
  };
  const double arrays = std::strcmp(kind, "copy") == 0 ? 2 : std::strcmp(kind, "triad") == 0 ? 3 : 1;
  const double bytes = arrays * static_cast<double>(slice) * threads * sizeof(float);
  double best = 0;
  for (int run = 0; run < runs; ++run) best = std::max(best, bytes / run_parallel(threads, work) * 1e-9);
  return best;
}

const cli::CommandSpec& bench_spec() {
  static const cli::CommandSpec spec{
      .name = "bench_peak",
      .summary = "peak f32 arithmetic and memory bandwidth of this machine, as a Markdown table",
      .usage = "[options]",
      .options =
          {
              {.name = "runs",
               .type = cli::OptionType::kInt,
               .value_name = "N",
               .default_value = "5",
               .description = "repetitions per figure; the best is reported",
               .min = 1,
               .max = 1000},
              {.name = "threads",
               .type = cli::OptionType::kInt,
               .value_name = "N",
               .default_value = "0",
               .description = "threads of the all-cores column; 0: one per core",
               .min = 0,
               .max = 1024},
              {.name = "buffer-mb",
               .type = cli::OptionType::kInt,
               .value_name = "N",
               .default_value = "256",
               .description = "size of each of the three bandwidth buffers",
               .min = 16,
               .max = 16384},
          },
  };
  return spec;
}

}  // namespace
}  // namespace edgefuse::bench

int main(int argc, char** argv) {
  using namespace edgefuse::bench;
  int exit_code = 0;
  const auto args = parse_bench_args(bench_spec(), "bench_peak", argc, argv, exit_code);
  if (!args) return exit_code;
  const int runs = static_cast<int>(args->get_int("runs"));
  int threads = static_cast<int>(args->get_int("threads"));
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  std::printf("bench_peak: %s, %d hardware threads, best of %d\n\n", compiler_description(),
              static_cast<int>(std::thread::hardware_concurrency()), runs);
  std::printf("| f32 arithmetic | 1 thread GFLOP/s | %d threads GFLOP/s |\n| --- | --- | --- |\n", threads);
  for (const ArithmeticKernel& kernel : arithmetic_kernels()) {
    std::printf("| %s | %.1f | %.1f |\n", kernel.name, best_gflops(kernel, 1, runs),
                best_gflops(kernel, threads, runs));
  }

  Buffers buffers;
  buffers.floats = static_cast<size_t>(args->get_int("buffer-mb")) << 18;  // MiB / 4 bytes
  for (auto* buffer : {&buffers.a, &buffers.b, &buffers.c}) {
    *buffer = std::make_unique<float[]>(buffers.floats);
    std::fill(buffer->get(), buffer->get() + buffers.floats, 1.0f);  // touch every page before timing
  }
  std::printf("\n| memory (%d MiB buffers) | 1 thread GB/s | %d threads GB/s |\n| --- | --- | --- |\n",
              static_cast<int>(args->get_int("buffer-mb")), threads);
  for (const char* kind : {"read", "write", "copy", "triad"}) {
    std::printf("| %s | %.1f | %.1f |\n", kind, best_bandwidth(kind, buffers, 1, runs),
                best_bandwidth(kind, buffers, threads, runs));
  }

  if (threads >= 2) {
    const CoreTrafficOptions traffic{.threads = threads, .runs = runs};
    const CoreTrafficFigures figures = measure_core_traffic(traffic);
    std::printf("\n| between cores (%d threads, %lld planes of %lld f32) | GB/s, median of %d |\n| --- | --- |\n",
                threads, static_cast<long long>(traffic.planes), static_cast<long long>(traffic.plane_floats), runs);
    std::printf("| each thread reads its own writes (one slice each) | %.1f |\n", figures.own_slice);
    std::printf("| every plane cut into one run per thread | %.1f |\n", figures.cut_planes);
    std::printf("| each thread reads another core's writes | %.1f |\n", figures.other_slice);
  }
  return 0;
}
