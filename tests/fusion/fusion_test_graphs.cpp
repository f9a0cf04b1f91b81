#include "tests/fusion/fusion_test_graphs.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>

#include "runtime/executor.h"
#include "tests/support/numerics.h"

namespace edgefuse::test {

ValueId GraphMaker::input(Shape shape) {
  const ValueId id = graph_.add_value("input" + std::to_string(counter_++), TensorDesc{DType::kF32, std::move(shape)});
  graph_.inputs().push_back(id);
  return id;
}

ValueId GraphMaker::constant(Tensor data) {
  return graph_.add_initializer("const" + std::to_string(counter_++), std::move(data));
}

ValueId GraphMaker::random_constant(Shape shape, std::mt19937& rng, double lo, double hi) {
  return constant(random_tensor(DType::kF32, std::move(shape), rng, lo, hi));
}

ValueId GraphMaker::node(OpKind op, std::vector<ValueId> inputs, Attributes attrs) {
  return node_with_outputs(op, std::move(inputs), 1, std::move(attrs))[0];
}

std::vector<ValueId> GraphMaker::node_with_outputs(OpKind op, std::vector<ValueId> inputs, int outputs,
                                                   Attributes attrs) {
  const int id = counter_++;
  Node n;
  n.op = op;
  n.name = std::string(op_name(op)) + std::to_string(id);
  n.inputs = std::move(inputs);
  for (int k = 0; k < outputs; ++k) {
    std::string name = "value" + std::to_string(id);
    if (outputs > 1) name.append("_").append(std::to_string(k));
    n.outputs.push_back(graph_.add_value(std::move(name), TensorDesc{DType::kF32, {}}));
  }
  n.attrs = std::move(attrs);
  std::vector<ValueId> produced = n.outputs;
  graph_.add_node(std::move(n));
  return produced;
}

Attributes same_padded_conv_attrs(int64_t kernel, int64_t group, int64_t stride) {
  Attributes a;
  const int64_t pad = kernel / 2;
  a.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  a.set("strides", std::vector<int64_t>{stride, stride});
  a.set("group", group);
  return a;
}

ValueId GraphMaker::ints(const std::vector<int64_t>& values) {
  return constant(Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())}, values));
}

ValueId GraphMaker::slice(ValueId x, int64_t start, int64_t end, int64_t axis) {
  return node(OpKind::kSlice, {x, ints({start}), ints({end}), ints({axis})});
}

Attributes int_attr(const char* name, int64_t value) {
  Attributes a;
  a.set(name, value);
  return a;
}

Attributes ints_attr(const char* name, std::vector<int64_t> values) {
  Attributes a;
  a.set(name, std::move(values));
  return a;
}

int count_nodes(const Graph& graph, OpKind op) {
  return static_cast<int>(
      std::count_if(graph.nodes().begin(), graph.nodes().end(), [&](const Node& n) { return n.op == op; }));
}

ValueId space_to_depth(GraphMaker& m, ValueId x, const StridePhase (&order)[4], StemSlices layout) {
  const auto ints = [&](std::vector<int64_t> values) {
    const int64_t count = static_cast<int64_t>(values.size());
    return m.constant(Tensor::from_vector<int64_t>({count}, values));
  };
  constexpr int64_t kToEnd = INT64_MAX;
  const auto rows = [&](int64_t dy) {
    return m.node(OpKind::kSlice, {x, ints({dy}), ints({kToEnd}), ints({2}), ints({2})});
  };
  const ValueId shared_rows[2] = {layout == StemSlices::kSharedRows ? rows(0) : kNoValue,
                                  layout == StemSlices::kSharedRows ? rows(1) : kNoValue};
  std::vector<ValueId> parts;
  for (const StridePhase& phase : order) {
    if (layout == StemSlices::kOnePerPhase) {
      parts.push_back(
          m.node(OpKind::kSlice, {x, ints({phase.dy, phase.dx}), ints({kToEnd, kToEnd}), ints({2, 3}), ints({2, 2})}));
      continue;
    }
    const ValueId row_slice = layout == StemSlices::kSharedRows ? shared_rows[phase.dy] : rows(phase.dy);
    parts.push_back(m.node(OpKind::kSlice, {row_slice, ints({phase.dx}), ints({kToEnd}), ints({3}), ints({2})}));
  }
  Attributes axis;
  axis.set("axis", int64_t{1});
  return m.node(OpKind::kConcat, parts, axis);
}

std::vector<Tensor> random_inputs_for(const Graph& graph, std::mt19937& rng) {
  std::vector<Tensor> inputs;
  for (ValueId id : graph.inputs()) inputs.push_back(random_tensor(DType::kF32, graph.value(id).desc.shape, rng));
  return inputs;
}

std::vector<Tensor> run_graph(const Graph& graph, const std::vector<Tensor>& inputs, bool reference_kernels) {
  ExecutorOptions options;
  options.threads = 1;
  options.reference_kernels = reference_kernels;
  Result<Executor> executor = Executor::create(std::make_shared<const Graph>(graph), options);
  REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
  Result<std::vector<Tensor>> outputs = executor->run(inputs);
  REQUIRE_MESSAGE(outputs.is_ok(), outputs.status().to_string());
  return std::move(outputs).value();
}

std::vector<Tensor> run_planned(const Graph& graph, const std::vector<Tensor>& inputs, int threads, MemoryPlan* plan) {
  ExecutorOptions options;
  options.threads = threads;
  Result<Executor> executor = Executor::create(std::make_shared<const Graph>(graph), options);
  REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
  Result<std::vector<Tensor>> outputs = executor->run(inputs);
  REQUIRE_MESSAGE(outputs.is_ok(), outputs.status().to_string());
  outputs = executor->run(inputs);
  REQUIRE_MESSAGE(outputs.is_ok(), outputs.status().to_string());
  REQUIRE(executor->memory_plan() != nullptr);
  *plan = *executor->memory_plan();
  return std::move(outputs).value();
}

std::vector<PassReport> optimize_checked(Graph& graph, const FusionOptions& options) {
  Result<std::vector<PassReport>> reports = optimize_graph(graph, options);
  REQUIRE_MESSAGE(reports.is_ok(), reports.status().to_string());
  return std::move(reports).value();
}

double fused_error(const Graph& fused, const Graph& original, unsigned seed) {
  std::mt19937 rng(seed);
  const std::vector<Tensor> inputs = random_inputs_for(original, rng);
  return max_relative_l2(run_graph(fused, inputs, false), run_graph(original, inputs, true));
}

int pass_changes(const std::vector<PassReport>& reports, const std::string& pass) {
  for (const PassReport& report : reports) {
    if (report.pass == pass) return report.changes;
  }
  return -1;
}

double max_relative_l2(const std::vector<Tensor>& actual, const std::vector<Tensor>& expected) {
  REQUIRE(actual.size() == expected.size());
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    REQUIRE(actual[i].shape() == expected[i].shape());
    const ErrorStats stats = compare_tensors(actual[i], expected[i]);
    REQUIRE(stats.mismatched_nan == 0);
    worst = std::max(worst, stats.relative_l2);
  }
  return worst;
}

Graph apply_and_compare(const Graph& graph, Status (*pass)(Graph&, PassReport&), int expected_changes) {
  Graph fused = graph;
  PassReport report;
  REQUIRE(pass(fused, report).is_ok());
  REQUIRE_MESSAGE(fused.verify().is_ok(), fused.verify().to_string());
  CHECK(report.changes == expected_changes);
  CHECK(static_cast<int>(report.details.size()) == report.changes);
  std::mt19937 rng(7);
  const std::vector<Tensor> inputs = random_inputs_for(graph, rng);
  for (bool reference : {false, true}) {
    const double error = max_relative_l2(run_graph(fused, inputs, reference), run_graph(graph, inputs, reference));
    CHECK_MESSAGE(error <= kFusionTolerance, (reference ? "reference" : "optimised"), " kernels");
  }
  return fused;
}

}  // namespace edgefuse::test
