// Engines the latency benchmarks alternate: each configured once per thread count, then run over
// and over on fixed inputs. Runs of the engines alternate (the order swapping each round), so that
// load on a noisy, shared machine slows them alike and the ratio of their medians holds.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "runtime/executor.h"

namespace edgefuse::bench {

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string prepare(int threads) = 0;  // "" when ready, else why not
  virtual std::string run() = 0;                 // "" on success, else why not
};

// edgefuse on `graph` with `options` (their thread count set by prepare): planned (one arena, as
// the daemon runs a fused graph) or eager (plan_memory off: one buffer per tensor, the baseline the
// fuser is measured against).
class EdgefuseEngine final : public Engine {
 public:
  EdgefuseEngine(std::shared_ptr<const Graph> graph, std::vector<Tensor> inputs, ExecutorOptions options)
      : graph_(std::move(graph)), inputs_(std::move(inputs)), options_(options) {}

  std::string prepare(int threads) override;
  std::string run() override;

 private:
  std::shared_ptr<const Graph> graph_;
  std::vector<Tensor> inputs_;
  ExecutorOptions options_;
  std::optional<Executor> executor_;
};

// Why an engine could not run, kept to one Markdown-safe line.
std::string one_line(std::string text);

// `warmup` untimed runs of each engine, then `runs` rounds in which each working engine runs once,
// in alternating order. One Samples per engine, in order.
std::vector<Samples> measure_alternating(std::span<Engine* const> engines, int threads, int64_t warmup, int64_t runs);

}  // namespace edgefuse::bench
