#include "bench/bench_engines.h"

#include <chrono>

namespace edgefuse::bench {

namespace {

double time_run_ms(Engine& engine, Samples& samples) {
  const auto start = std::chrono::steady_clock::now();
  std::string failure = engine.run();
  const auto stop = std::chrono::steady_clock::now();
  if (!failure.empty()) samples.failure = one_line(failure);
  return std::chrono::duration<double, std::milli>(stop - start).count();
}

}  // namespace

std::string EdgefuseEngine::prepare(int threads) {
  executor_.reset();
  ExecutorOptions options = options_;
  options.threads = threads;
  Result<Executor> executor = Executor::create(graph_, options);
  if (!executor.is_ok()) return executor.status().message();
  executor_.emplace(std::move(executor).value());
  return "";
}

std::string EdgefuseEngine::run() {
  Result<std::vector<Tensor>> outputs = executor_->run(inputs_);
  return outputs.is_ok() ? "" : outputs.status().message();
}

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '|') c = ' ';
  }
  constexpr size_t kMaxLength = 160;
  if (text.size() > kMaxLength) text = text.substr(0, kMaxLength) + "...";
  return text;
}

std::vector<Samples> measure_alternating(std::span<Engine* const> engines, int threads, int64_t warmup, int64_t runs) {
  std::vector<Samples> results(engines.size());
  for (size_t e = 0; e < engines.size(); ++e) {
    results[e].failure = one_line(engines[e]->prepare(threads));
    for (int64_t i = 0; i < warmup && results[e].failure.empty(); ++i) time_run_ms(*engines[e], results[e]);
  }
  for (int64_t round = 0; round < runs; ++round) {
    for (size_t k = 0; k < engines.size(); ++k) {
      const size_t e = round % 2 == 0 ? k : engines.size() - 1 - k;
      if (!results[e].failure.empty()) continue;
      const double ms = time_run_ms(*engines[e], results[e]);
      if (results[e].failure.empty()) results[e].ms.push_back(ms);
    }
  }
  return results;
}

}  // namespace edgefuse::bench
