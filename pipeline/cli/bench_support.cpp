#include "pipeline/cli/bench_support.h"

#include <algorithm>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "runtime/cost_model.h"

namespace edgefuse::cli {
namespace {

template <typename T>
void fill_random(Tensor& tensor, std::mt19937& generator) {
  T* data = tensor.data<T>();
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> integer(0, 9);
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    if constexpr (std::is_same_v<T, Half>) {
      data[i] = float_to_half(real(generator));
    } else if constexpr (std::is_same_v<T, bool>) {
      data[i] = integer(generator) % 2 == 0;
    } else if constexpr (std::is_floating_point_v<T>) {
      data[i] = static_cast<T>(real(generator));
    } else {
      data[i] = static_cast<T>(integer(generator));
    }
  }
}

}  // namespace

Result<std::vector<Tensor>> random_inputs(const Graph& graph, uint32_t seed) {
  std::mt19937 generator(seed);
  std::vector<Tensor> inputs;
  for (ValueId id : graph.inputs()) {
    const Value& input = graph.value(id);
    if (std::any_of(input.desc.shape.begin(), input.desc.shape.end(), [](int64_t dim) { return dim < 0; })) {
      return invalid_argument("input '", input.name, "' has unknown dims ", shape_to_string(input.desc.shape),
                              " (-1 = unknown); benchmark a model exported with a fixed input shape");
    }
    EF_RETURN_IF_ERROR(validate_shape(input.desc.shape, dtype_size(input.desc.dtype))
                           .with_context(make_message("input '", input.name, "'")));
    Tensor tensor = Tensor::empty(input.desc.dtype, input.desc.shape);
    visit_dtype(input.desc.dtype, [&](auto tag) { fill_random<decltype(tag)>(tensor, generator); });
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

LatencyStats summarize_latencies(std::vector<double> samples_ms) {
  EF_ASSERT(!samples_ms.empty(), "no latency samples");
  std::sort(samples_ms.begin(), samples_ms.end());
  const size_t n = samples_ms.size();
  LatencyStats stats;
  stats.median_ms = n % 2 == 1 ? samples_ms[n / 2] : (samples_ms[n / 2 - 1] + samples_ms[n / 2]) / 2;
  stats.min_ms = samples_ms.front();
  stats.max_ms = samples_ms.back();
  return stats;
}

std::string kernel_class(const Graph& graph, const MemoryPlan& plan, NodeId node) {
  const Node& n = graph.node(node);
  std::string name(op_name(n.op));
  if (n.op != OpKind::kConv || n.inputs.size() < 2) return name;
  const Shape& w = plan.descs[static_cast<size_t>(n.inputs[1])].shape;  // [M, C / group, k...]
  const Shape& x = plan.descs[static_cast<size_t>(n.inputs[0])].shape;  // [N, C, spatial...]
  if (w.size() < 3 || x.size() != w.size()) return name;
  const int64_t group = n.attrs.get_int("group", 1);
  if (group > 1) name += group == x[1] && group == w[0] ? " dw" : " grouped";
  std::ostringstream out;
  out << name << ' ';
  for (size_t d = 2; d < w.size(); ++d) out << (d > 2 ? "x" : "") << w[d];
  const std::vector<int64_t> strides = n.attrs.get_ints("strides");
  const int64_t stride = strides.empty() ? 1 : *std::max_element(strides.begin(), strides.end());
  if (stride > 1) out << '/' << stride;
  return out.str();
}

std::vector<OpTime> time_per_op(const Graph& graph, const std::vector<std::vector<double>>& node_ms,
                                const MemoryPlan* plan) {
  std::map<std::string, OpTime> by_op;
  for (size_t n = 0; n < node_ms.size() && n < graph.nodes().size(); ++n) {
    if (node_ms[n].empty()) continue;
    const NodeId id = static_cast<NodeId>(n);
    OpTime& entry = by_op[plan != nullptr ? kernel_class(graph, *plan, id) : std::string(op_name(graph.node(id).op))];
    entry.nodes += 1;
    entry.median_ms += summarize_latencies(node_ms[n]).median_ms;
    if (plan != nullptr) entry.flops += node_flops(graph, *plan, id);
  }
  std::vector<OpTime> ops;
  for (auto& [name, entry] : by_op) {
    entry.op = name;
    ops.push_back(entry);
  }
  std::sort(ops.begin(), ops.end(), [](const OpTime& a, const OpTime& b) { return a.median_ms > b.median_ms; });
  return ops;
}

std::vector<NodeTime> slowest_nodes(const Graph& graph, const std::vector<std::vector<double>>& node_ms,
                                    const MemoryPlan& plan, size_t count) {
  std::vector<NodeTime> nodes;
  for (size_t n = 0; n < node_ms.size() && n < graph.nodes().size(); ++n) {
    if (node_ms[n].empty()) continue;
    const NodeId id = static_cast<NodeId>(n);
    const Node& node = graph.node(id);
    NodeTime entry;
    entry.node = id;
    entry.kernel = kernel_class(graph, plan, id);
    std::ostringstream shapes;
    if (!node.inputs.empty()) shapes << shape_to_string(plan.descs[static_cast<size_t>(node.inputs[0])].shape);
    if (!node.outputs.empty())
      shapes << " -> " << shape_to_string(plan.descs[static_cast<size_t>(node.outputs[0])].shape);
    entry.shapes = shapes.str();
    entry.median_ms = summarize_latencies(node_ms[n]).median_ms;
    entry.flops = node_flops(graph, plan, id);
    nodes.push_back(std::move(entry));
  }
  std::sort(nodes.begin(), nodes.end(), [](const NodeTime& a, const NodeTime& b) { return a.median_ms > b.median_ms; });
  if (nodes.size() > count) nodes.resize(count);
  return nodes;
}

}  // namespace edgefuse::cli
