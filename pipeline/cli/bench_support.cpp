#include "pipeline/cli/bench_support.h"

#include <algorithm>
#include <cstring>
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

Result<std::vector<Tensor>> random_batch_inputs(const Graph& graph, int64_t batch) {
  std::vector<Tensor> stacked;
  for (int64_t image = 0; image < batch; ++image) {
    EF_ASSIGN_OR_RETURN(std::vector<Tensor> one, random_inputs(graph, static_cast<uint32_t>(image + 1)));
    for (size_t i = 0; i < one.size(); ++i) {
      if (image == 0) {
        if (one[i].rank() == 0 || one[i].dim(0) != 1) {
          return invalid_argument("input '", graph.value(graph.inputs()[i]).name, "' has shape ",
                                  shape_to_string(one[i].shape()), ": a batch needs a first dimension of 1");
        }
        Shape shape = one[i].shape();
        shape[0] = batch;
        stacked.push_back(Tensor::empty(one[i].dtype(), std::move(shape)));
      }
      std::memcpy(static_cast<unsigned char*>(stacked[i].raw_data()) + static_cast<size_t>(image) * one[i].nbytes(),
                  one[i].raw_data(), one[i].nbytes());
    }
  }
  return stacked;
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

namespace {

// The node run inside node n's kernel, or -1.
NodeId partner_of(std::span<const NodeId> pairs, size_t n) {
  return n < pairs.size() ? pairs[n] : -1;
}

// Nodes that ran inside another node's kernel: their time is that node's.
std::vector<bool> inside_others(std::span<const NodeId> pairs, size_t nodes) {
  std::vector<bool> inside(nodes, false);
  for (NodeId partner : pairs) {
    if (partner >= 0 && static_cast<size_t>(partner) < nodes) inside[static_cast<size_t>(partner)] = true;
  }
  return inside;
}

// "Conv dw 3x3" with its partner "Conv 1x1": "Conv dw 3x3 + 1x1".
std::string joined_class(const std::string& first, std::string second) {
  const std::string shared = "Conv ";
  if (first.rfind(shared, 0) == 0 && second.rfind(shared, 0) == 0) second.erase(0, shared.size());
  return first + " + " + second;
}

}  // namespace

std::vector<OpTime> time_per_op(const Graph& graph, const std::vector<std::vector<double>>& node_ms,
                                const MemoryPlan* plan, std::span<const NodeId> pairs) {
  std::map<std::string, OpTime> by_op;
  const std::vector<bool> inside = inside_others(pairs, graph.nodes().size());
  const auto class_of = [&](NodeId id) {
    return plan != nullptr ? kernel_class(graph, *plan, id) : std::string(op_name(graph.node(id).op));
  };
  for (size_t n = 0; n < node_ms.size() && n < graph.nodes().size(); ++n) {
    if (node_ms[n].empty() || inside[n]) continue;
    const NodeId id = static_cast<NodeId>(n);
    const NodeId partner = partner_of(pairs, n);
    OpTime& entry = by_op[partner >= 0 ? joined_class(class_of(id), class_of(partner)) : class_of(id)];
    entry.nodes += 1;
    entry.median_ms += summarize_latencies(node_ms[n]).median_ms;
    if (plan != nullptr) {
      entry.flops += node_flops(graph, *plan, id) + (partner >= 0 ? node_flops(graph, *plan, partner) : 0);
    }
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
                                    const MemoryPlan& plan, size_t count, std::span<const NodeId> pairs) {
  std::vector<NodeTime> nodes;
  const std::vector<bool> inside = inside_others(pairs, graph.nodes().size());
  for (size_t n = 0; n < node_ms.size() && n < graph.nodes().size(); ++n) {
    if (node_ms[n].empty() || inside[n]) continue;
    const NodeId id = static_cast<NodeId>(n);
    const NodeId partner = partner_of(pairs, n);
    const Node& node = graph.node(id);
    NodeTime entry;
    entry.node = id;
    entry.partner = partner;
    entry.kernel = partner >= 0 ? joined_class(kernel_class(graph, plan, id), kernel_class(graph, plan, partner))
                                : kernel_class(graph, plan, id);
    std::ostringstream shapes;
    if (!node.inputs.empty()) shapes << shape_to_string(plan.descs[static_cast<size_t>(node.inputs[0])].shape);
    if (!node.outputs.empty())
      shapes << " -> " << shape_to_string(plan.descs[static_cast<size_t>(node.outputs[0])].shape);
    entry.shapes = shapes.str();
    entry.median_ms = summarize_latencies(node_ms[n]).median_ms;
    entry.flops = node_flops(graph, plan, id) + (partner >= 0 ? node_flops(graph, plan, partner) : 0);
    nodes.push_back(std::move(entry));
  }
  std::sort(nodes.begin(), nodes.end(), [](const NodeTime& a, const NodeTime& b) { return a.median_ms > b.median_ms; });
  if (nodes.size() > count) nodes.resize(count);
  return nodes;
}

}  // namespace edgefuse::cli
