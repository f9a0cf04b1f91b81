// Shared by `edgefuse bench` and bench/bench_models: random inputs that fit a graph's declared
// inputs, and latency statistics over timed runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/graph.h"
#include "runtime/status.h"

namespace edgefuse::cli {

// One tensor per graph input, in graph input order, filled from a fixed-seed generator: floats
// uniform in [-1, 1], integers in [0, 10), bools either way. Inputs with unknown (-1) dims are an
// error asking for a fixed-shape model.
Result<std::vector<Tensor>> random_inputs(const Graph& graph, uint32_t seed = 1);

struct LatencyStats {
  double median_ms = 0;  // mean of the middle two for an even count
  double min_ms = 0;
  double max_ms = 0;
};

// `samples_ms` must not be empty.
LatencyStats summarize_latencies(std::vector<double> samples_ms);

struct OpTime {
  std::string op;        // op type name
  size_t nodes = 0;      // nodes of that type
  double median_ms = 0;  // sum over those nodes of each node's median time
};
// Per op type, from per-node samples (node_ms[node][run]); sorted by time, largest first.
std::vector<OpTime> time_per_op(const Graph& graph, const std::vector<std::vector<double>>& node_ms);

}  // namespace edgefuse::cli
