// Shared by `edgefuse bench` and bench/bench_models: random inputs that fit a graph's declared
// inputs, and latency statistics over timed runs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/graph.h"
#include "runtime/memory_plan.h"
#include "runtime/status.h"

namespace edgefuse::cli {

// One tensor per graph input, in graph input order, filled from a fixed-seed generator: floats
// uniform in [-1, 1], integers in [0, 10), bools either way. Inputs with unknown (-1) dims are an
// error asking for a fixed-shape model.
Result<std::vector<Tensor>> random_inputs(const Graph& graph, uint32_t seed = 1);
// The same for `batch` images at once, for a graph whose inputs have a batch of one: image i's
// values as random_inputs(graph, i + 1) gives them, stacked along the first dimension.
Result<std::vector<Tensor>> random_batch_inputs(const Graph& graph, int64_t batch);

struct LatencyStats {
  double median_ms = 0;  // mean of the middle two for an even count
  double min_ms = 0;
  double max_ms = 0;
};

// `samples_ms` must not be empty.
LatencyStats summarize_latencies(std::vector<double> samples_ms);

struct OpTime {
  std::string op;        // op type name, or with a plan its kernel class ("Conv 1x1", "Conv dw 3x3/2")
  size_t nodes = 0;      // nodes of that type
  double median_ms = 0;  // sum over those nodes of each node's median time
  int64_t flops = 0;     // arithmetic of those nodes (runtime/cost_model.h); 0 without a plan

  double gflops_per_s() const { return median_ms > 0 ? static_cast<double>(flops) / (median_ms * 1e6) : 0; }
};
// Per op type, from per-node samples (node_ms[node][run]); sorted by time, largest first. With the
// plan the nodes ran under, Convs are split by kernel class (kernel_class) and FLOPs are counted, so
// that each class's rate can be read against the machine's peak (bench/bench_peak). `pairs`
// (Executor::last_kernel_pairs) joins a node run inside another's kernel to that one's class
// ("Conv dw 3x3 + 1x1"), time and FLOPs.
std::vector<OpTime> time_per_op(const Graph& graph, const std::vector<std::vector<double>>& node_ms,
                                const MemoryPlan* plan = nullptr, std::span<const NodeId> pairs = {});

struct NodeTime {
  NodeId node = 0;
  NodeId partner = -1;   // the node run inside this one's kernel, or -1
  std::string kernel;    // kernel_class
  std::string shapes;    // "[1,16,208,208] -> [1,32,104,104]": first input and (partner's) first output
  double median_ms = 0;  // the node's median over the timed runs
  int64_t flops = 0;

  double gflops_per_s() const { return median_ms > 0 ? static_cast<double>(flops) / (median_ms * 1e6) : 0; }
};
// The `count` slowest nodes the plan ran, slowest first: where a kernel class's time goes. Pairs
// as in time_per_op.
std::vector<NodeTime> slowest_nodes(const Graph& graph, const std::vector<std::vector<double>>& node_ms,
                                    const MemoryPlan& plan, size_t count, std::span<const NodeId> pairs = {});

// What kind of CPU kernel a node runs: its op name, refined for Conv by kernel size, stride and
// grouping ("Conv 1x1", "Conv 3x3/2", "Conv dw 3x3", "Conv grouped 3x3").
std::string kernel_class(const Graph& graph, const MemoryPlan& plan, NodeId node);

}  // namespace edgefuse::cli
