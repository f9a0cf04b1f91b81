#include "pipeline/cli/bench_support.h"

#include <algorithm>
#include <map>
#include <random>

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

std::vector<OpTime> time_per_op(const Graph& graph, const std::vector<std::vector<double>>& node_ms) {
  std::map<std::string, OpTime> by_op;
  for (size_t n = 0; n < node_ms.size() && n < graph.nodes().size(); ++n) {
    if (node_ms[n].empty()) continue;
    OpTime& entry = by_op[std::string(op_name(graph.nodes()[n].op))];
    entry.nodes += 1;
    entry.median_ms += summarize_latencies(node_ms[n]).median_ms;
  }
  std::vector<OpTime> ops;
  for (auto& [name, entry] : by_op) {
    entry.op = name;
    ops.push_back(entry);
  }
  std::sort(ops.begin(), ops.end(), [](const OpTime& a, const OpTime& b) { return a.median_ms > b.median_ms; });
  return ops;
}

}  // namespace edgefuse::cli
