// Runs a graph on the CPU: for each node in order, infer its output shapes from the actual
// inputs, allocate, run the kernel, and release each value after its last use.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/buffer_pool.h"
#include "runtime/graph.h"
#include "runtime/status.h"
#include "runtime/thread_pool.h"

namespace edgefuse {

struct ExecutorOptions {
  int threads = 0;                 // worker threads including the caller; <= 0: one per core
  bool reference_kernels = false;  // run the naive reference kernels (the test oracle) instead of optimised ones
  bool profile = false;            // time every node (shape rule, allocation and kernel) of each run
};

class Executor {
 public:
  // Verifies the graph; the executor keeps a shared reference to it.
  static Result<Executor> create(std::shared_ptr<const Graph> graph, ExecutorOptions options = {});

  // Runs with one tensor per graph input, in graph input order; returns the graph outputs in
  // order. Inputs are checked against the graph's declared dtypes and known dims.
  Result<std::vector<Tensor>> run(std::span<const Tensor> inputs);

  // Per node, in graph order: milliseconds spent in the last run (empty unless options.profile).
  const std::vector<double>& last_profile_ms() const { return profile_ms_; }

  const Graph& graph() const { return *graph_; }
  int threads() const { return pool_ ? pool_->size() : 1; }

 private:
  Executor() = default;
  Status check_input(size_t index, const Tensor& tensor) const;

  std::shared_ptr<const Graph> graph_;
  ExecutorOptions options_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<int> use_counts_;  // per value: consumer nodes, plus one when it is a graph output
  std::vector<double> profile_ms_;
  std::unique_ptr<BufferPool> buffers_;  // storage of released intermediate values, reused next run
};

}  // namespace edgefuse
