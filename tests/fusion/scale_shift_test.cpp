// fold_scale_shift_into_conv (fusion/): Mul, Add, Sub and Div of a Conv's output by per-channel
// or scalar constants, in either operand order where the op allows, alone and chained, become
// the Conv's weights and bias; the activation after them is then fused as usual. Constants that
// vary along other axes, broadcast the output bigger, divide by zero or are not finite, and Conv
// outputs read elsewhere, are left alone. Each against the unfused graph on random inputs.
#include <doctest/doctest.h>

#include <limits>
#include <random>

#include "fusion/passes.h"
#include "tests/fusion/fusion_test_graphs.h"

namespace edgefuse::test {
namespace {

// A Conv of x [1, 3, 6, 7] to `channels` outputs (3x3, or depthwise when channels is 3 and
// depthwise is set), with or without a bias.
ValueId conv_of(GraphMaker& m, ValueId x, int64_t channels, bool bias, bool depthwise, std::mt19937& rng) {
  const int64_t group = depthwise ? 3 : 1;
  std::vector<ValueId> inputs = {x, m.random_constant({channels, 3 / group, 3, 3}, rng, -0.5, 0.5)};
  if (bias) inputs.push_back(m.random_constant({channels}, rng));
  return m.node(OpKind::kConv, inputs, same_padded_conv_attrs(3, group));
}

int affine_ops(const Graph& graph) {
  return count_nodes(graph, OpKind::kMul) + count_nodes(graph, OpKind::kAdd) + count_nodes(graph, OpKind::kSub) +
         count_nodes(graph, OpKind::kDiv);
}

TEST_CASE("fold_scale_shift_into_conv folds Mul, Add, Sub and Div by channel constants, in either order") {
  struct Case {
    const char* name;
    OpKind op;
    Shape constant_shape;
    bool constant_first;
  };
  const Case cases[] = {
      {"Mul(y, c[1,M,1,1])", OpKind::kMul, {1, 3, 1, 1}, false},
      {"Mul(c[M,1,1], y)", OpKind::kMul, {3, 1, 1}, true},
      {"Mul(y, scalar)", OpKind::kMul, {}, false},
      {"Add(y, c[M,1,1])", OpKind::kAdd, {3, 1, 1}, false},
      {"Add(c[1], y)", OpKind::kAdd, {1}, true},
      {"Sub(y, c[1,M,1,1])", OpKind::kSub, {1, 3, 1, 1}, false},
      {"Sub(c[M,1,1], y)", OpKind::kSub, {3, 1, 1}, true},
      {"Div(y, c[M,1,1])", OpKind::kDiv, {3, 1, 1}, false},
      {"Div(y, c[1,1,1,1])", OpKind::kDiv, {1, 1, 1, 1}, false},
  };
  for (const Case& c : cases) {
    for (bool bias : {false, true}) {
      for (bool depthwise : {false, true}) {
        CAPTURE(c.name);
        CAPTURE(bias);
        CAPTURE(depthwise);
        std::mt19937 rng(11);
        GraphMaker m;
        const ValueId x = m.input({1, 3, 6, 7});
        const ValueId y = conv_of(m, x, 3, bias, depthwise, rng);
        const ValueId k = m.random_constant(c.constant_shape, rng, 0.5, 1.5);
        m.output(m.node(c.op, c.constant_first ? std::vector<ValueId>{k, y} : std::vector<ValueId>{y, k}));
        const Graph fused = apply_and_compare(m.graph(), fusion::fold_scale_shift_into_conv, 1);
        CHECK(fused.nodes().size() == 1);
        CHECK(fused.nodes()[0].op == OpKind::kConv);
        CHECK(fused.nodes()[0].input_count() == 3);  // a bias now, whether or not there was one
      }
    }
  }
}

TEST_CASE("fold_scale_shift_into_conv folds a chain, then the activation fuses; shared weights stay") {
  std::mt19937 rng(12);
  GraphMaker m;
  const ValueId x = m.input({1, 3, 6, 7});
  const ValueId weight = m.random_constant({5, 3, 1, 1}, rng);
  const ValueId y = m.node(OpKind::kConv, {x, weight});
  const ValueId scaled = m.node(OpKind::kMul, {y, m.random_constant({1, 5, 1, 1}, rng, -1.5, 1.5)});
  const ValueId shifted = m.node(OpKind::kAdd, {m.random_constant({5, 1, 1}, rng), scaled});
  const ValueId normalised = m.node(OpKind::kDiv, {shifted, m.constant(Tensor::scalar<float>(0.75f))});
  m.output(m.node(OpKind::kRelu, {normalised}));
  m.output(m.node(OpKind::kConv, {x, weight}));  // reads the same weight, which must not change
  const Graph folded = apply_and_compare(m.graph(), fusion::fold_scale_shift_into_conv, 3);
  CHECK(affine_ops(folded) == 0);
  CHECK(folded.nodes().size() == 3);  // two Convs and the Relu

  Graph fused = m.graph();
  const std::vector<PassReport> reports = optimize_checked(fused);
  CHECK(pass_changes(reports, "fold_scale_shift_into_conv") == 3);
  REQUIRE(fused.nodes().size() == 2);
  CHECK(fused.nodes()[0].attrs.get_string("fused_activation", "") == "relu");
  CHECK(fused_error(fused, m.graph(), 13) <= kFusionTolerance);
}

TEST_CASE("fold_scale_shift_into_conv leaves constants it cannot fold and shared Conv outputs alone") {
  std::mt19937 rng(14);
  GraphMaker m;
  const ValueId x = m.input({1, 3, 6, 7});
  const auto conv = [&] { return conv_of(m, x, 3, true, false, rng); };
  // Constants that vary along a spatial axis (one of rank 1 aligns with W), or broadcast the
  // output to rank 5.
  m.output(m.node(OpKind::kMul, {conv(), m.random_constant({1, 1, 6, 1}, rng)}));
  m.output(m.node(OpKind::kAdd, {conv(), m.random_constant({1, 1, 1, 7}, rng)}));
  m.output(m.node(OpKind::kMul, {conv(), m.random_constant({7}, rng)}));
  m.output(m.node(OpKind::kAdd, {conv(), m.random_constant({1, 1, 3, 1, 1}, rng)}));
  // Division of a constant by the Conv output, and by a zero channel.
  m.output(m.node(OpKind::kDiv, {m.random_constant({3, 1, 1}, rng, 0.5, 1.5), conv()}));
  m.output(m.node(OpKind::kDiv, {conv(), m.constant(Tensor::from_vector<float>({3, 1, 1}, {1.0f, 0.0f, 2.0f}))}));
  // A scale that is not finite, and one whose folded weights (all above 4) would overflow.
  m.output(m.node(OpKind::kMul, {conv(), m.constant(Tensor::scalar<float>(std::numeric_limits<float>::infinity()))}));
  const ValueId large = m.node(OpKind::kConv, {x, m.random_constant({3, 3, 1, 1}, rng, 4.0, 5.0)});
  m.output(m.node(OpKind::kMul, {large, m.constant(Tensor::scalar<float>(std::numeric_limits<float>::max()))}));
  // The other operand is not a constant.
  m.output(m.node(OpKind::kMul, {conv(), m.input({3, 1, 1})}));
  // The Conv output is read twice, or is a graph output itself.
  const ValueId shared = conv();
  m.output(m.node(OpKind::kMul, {shared, m.random_constant({3, 1, 1}, rng)}));
  m.output(m.node(OpKind::kRelu, {shared}));
  const ValueId exposed = conv();
  m.output(exposed);
  m.output(m.node(OpKind::kAdd, {exposed, m.random_constant({3, 1, 1}, rng)}));
  // A Conv that already has its activation (only the pass itself is run here).
  const ValueId activated = conv();
  {
    Graph& g = m.graph();
    g.nodes()[static_cast<size_t>(g.value(activated).producer)].attrs.set("fused_activation", std::string("relu"));
  }
  m.output(m.node(OpKind::kMul, {activated, m.random_constant({3, 1, 1}, rng)}));

  Graph graph = m.graph();
  const size_t nodes = graph.nodes().size();
  PassReport report;
  REQUIRE(fusion::fold_scale_shift_into_conv(graph, report).is_ok());
  CHECK(report.changes == 0);
  CHECK(graph.nodes().size() == nodes);
}

}  // namespace
}  // namespace edgefuse::test
