// trim_zero_padded_residuals (fusion/): BlazeFace-style shortcuts Add(Conv(x), Concat(x, zeros))
// become a Conv whose residual is x alone, and the optimised kernels add it to the first channels
// only: 1x1 GEMM tiles whose rows take the residual in full, in part or not at all, the dense
// (3x3) path, the residual before or after the activation, and the depthwise + 1x1 pair; each
// against the unfused graph on the reference kernels. Padding that is not all zeros, a Concat read
// elsewhere, zeros before x, and grouped Convs are left alone.
#include <doctest/doctest.h>

#include <random>

#include "fusion/passes.h"
#include "tests/fusion/fusion_test_graphs.h"

namespace edgefuse::test {
namespace {

// Concat(x, zeros) on channels, x having `channels` of `total`.
ValueId zero_padded(GraphMaker& m, ValueId x, int64_t channels, int64_t total, int64_t h, int64_t w) {
  Attributes axis;
  axis.set("axis", int64_t{1});
  return m.node(OpKind::kConcat, {x, m.constant(Tensor::zeros(DType::kF32, {1, total - channels, h, w}))}, axis);
}

int count(const Graph& graph, OpKind op) {
  int n = 0;
  for (const Node& node : graph.nodes()) n += node.op == op ? 1 : 0;
  return n;
}

// Optimises `graph`, checks every Concat went and every Conv with a residual reads fewer channels,
// then compares the optimised kernels against the unfused graph on the reference kernels.
void check_trimmed(const Graph& graph, int expected_trims) {
  Graph fused = graph;
  Result<std::vector<PassReport>> reports = optimize_graph(fused);
  REQUIRE_MESSAGE(reports.is_ok(), reports.status().to_string());
  int trims = 0;
  for (const PassReport& report : *reports) {
    if (report.pass == "trim_zero_padded_residuals") trims = report.changes;
  }
  CHECK(trims == expected_trims);
  CHECK(count(fused, OpKind::kConcat) == 0);
  std::mt19937 input_rng(5);
  const std::vector<Tensor> inputs = random_inputs_for(graph, input_rng);
  const std::vector<Tensor> expected = run_graph(graph, inputs, true);
  for (bool reference : {false, true}) {
    CAPTURE(reference);
    CHECK(max_relative_l2(run_graph(fused, inputs, reference), expected) <= kFusionTolerance);
  }
}

}  // namespace

TEST_CASE("trim_zero_padded_residuals: the residual reads the unpadded input, results unchanged") {
  struct Case {
    int64_t channels, out_channels, kernel;
    bool relu_before_add;  // Add(Relu(Conv), padded): the residual after the activation
  };
  // 4 of 8 rows: one 8-row tile in part; 12 of 20: a whole tile, one in part, one without; 28 of 32
  // (BlazeFace); a 3x3 Conv through the dense path; the residual after the activation.
  const Case cases[] = {{4, 8, 1, false}, {12, 20, 1, false}, {28, 32, 1, false}, {6, 10, 3, false}, {12, 20, 1, true}};
  for (const Case& c : cases) {
    CAPTURE(c.channels);
    CAPTURE(c.out_channels);
    CAPTURE(c.kernel);
    CAPTURE(c.relu_before_add);
    std::mt19937 rng(31);
    GraphMaker m;
    const ValueId x = m.input({1, c.channels, 9, 13});
    ValueId y = m.node(OpKind::kConv,
                       {x, m.random_constant({c.out_channels, c.channels, c.kernel, c.kernel}, rng),
                        m.random_constant({c.out_channels}, rng)},
                       same_padded_conv_attrs(c.kernel));
    if (c.relu_before_add) y = m.node(OpKind::kRelu, {y});
    const ValueId sum = m.node(OpKind::kAdd, {y, zero_padded(m, x, c.channels, c.out_channels, 9, 13)});
    m.output(c.relu_before_add ? sum : m.node(OpKind::kRelu, {sum}));
    check_trimmed(m.graph(), 1);
  }
}

TEST_CASE("trim_zero_padded_residuals: BlazeFace's depthwise + 1x1 block, run as one paired kernel") {
  // 24 -> 28 channels at 128 x 128: the tensors exceed L2, so the executor pairs the two Convs.
  std::mt19937 rng(32);
  GraphMaker m;
  const ValueId x = m.input({1, 24, 128, 128});
  const ValueId dw = m.node(OpKind::kConv, {x, m.random_constant({24, 1, 3, 3}, rng), m.random_constant({24}, rng)},
                            same_padded_conv_attrs(3, 24));
  const ValueId pw = m.node(OpKind::kConv, {dw, m.random_constant({28, 24, 1, 1}, rng), m.random_constant({28}, rng)},
                            same_padded_conv_attrs(1));
  m.output(m.node(OpKind::kRelu, {m.node(OpKind::kAdd, {pw, zero_padded(m, x, 24, 28, 128, 128)})}));
  check_trimmed(m.graph(), 1);
}

TEST_CASE("trim_zero_padded_residuals leaves non-zero padding, shared Concats, leading zeros and groups alone") {
  std::mt19937 rng(33);
  GraphMaker m;
  const ValueId x = m.input({1, 4, 6, 6});
  Attributes axis;
  axis.set("axis", int64_t{1});
  const auto conv = [&](int64_t group) {
    return m.node(OpKind::kConv, {x, m.random_constant({8, 4 / group, 1, 1}, rng)}, same_padded_conv_attrs(1, group));
  };
  // Padding with a non-zero constant.
  m.output(m.node(OpKind::kAdd, {conv(1), m.node(OpKind::kConcat, {x, m.random_constant({1, 4, 6, 6}, rng)}, axis)}));
  // The padded tensor is also a graph output.
  const ValueId shared = zero_padded(m, x, 4, 8, 6, 6);
  m.output(m.node(OpKind::kAdd, {conv(1), shared}));
  m.output(shared);
  // Zeros first.
  m.output(m.node(OpKind::kAdd,
                  {conv(1), m.node(OpKind::kConcat, {m.constant(Tensor::zeros(DType::kF32, {1, 4, 6, 6})), x}, axis)}));
  // A grouped Conv.
  m.output(m.node(OpKind::kAdd, {conv(2), zero_padded(m, x, 4, 8, 6, 6)}));
  Graph graph = m.graph();
  Result<std::vector<PassReport>> reports = optimize_graph(graph);
  REQUIRE(reports.is_ok());
  for (const PassReport& report : *reports) {
    if (report.pass == "trim_zero_padded_residuals") CHECK(report.changes == 0);
  }
  CHECK(count(graph, OpKind::kConcat) == 4);
  std::mt19937 input_rng(6);
  const std::vector<Tensor> inputs = random_inputs_for(m.graph(), input_rng);
  CHECK(max_relative_l2(run_graph(graph, inputs, false), run_graph(m.graph(), inputs, true)) <= kFusionTolerance);
}

}  // namespace edgefuse::test
