// fold_split_into_concat on hand-built graphs: YOLOv8's C2f (a Conv's output split in halves, a
// bottleneck on the second, every piece concatenated) takes the Conv's output whole; pieces out of
// order, partly taken, or on another axis are left alone. Each rewrite is checked against the
// unfused graph on random inputs with both kernel sets, and planned as the CPU executor plans it.
#include <doctest/doctest.h>

#include <random>

#include "fusion/passes.h"
#include "tests/fusion/fusion_test_graphs.h"

namespace edgefuse::test {
namespace {

ValueId sizes(GraphMaker& m, const std::vector<int64_t>& values) {
  return m.constant(Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())}, values));
}

// C2f: x -> 1x1 Conv (2c) -> Split (c, c) -> a, b; b -> Conv 3x3 -> m; Concat(a, b, m) -> 1x1 Conv.
struct C2f {
  GraphMaker m;
  ValueId mixed = kNoValue;
  ValueId joined = kNoValue;
};

void build_c2f(C2f& g, std::mt19937& rng, std::vector<int> order) {
  GraphMaker& m = g.m;
  const int64_t c = 4;
  g.mixed = m.node(OpKind::kConv, {m.input({1, 6, 8, 8}), m.random_constant({2 * c, 6, 1, 1}, rng)});
  const std::vector<ValueId> halves = m.node_with_outputs(OpKind::kSplit, {g.mixed, sizes(m, {c, c})}, 2, axis_attr(1));
  const ValueId inner =
      m.node(OpKind::kConv, {halves[1], m.random_constant({c, c, 3, 3}, rng)}, same_padded_conv_attrs(3));
  const ValueId pieces[3] = {halves[0], halves[1], inner};
  std::vector<ValueId> joined;
  for (int i : order) joined.push_back(pieces[i]);
  g.joined = m.node(OpKind::kConcat, joined, axis_attr(1));
  m.output(m.node(OpKind::kConv, {g.joined, m.random_constant({5, 3 * c, 1, 1}, rng)}));
}

TEST_CASE("fold_split_into_concat: YOLOv8's C2f concatenates the Conv's output whole") {
  std::mt19937 rng(21);
  C2f g;
  build_c2f(g, rng, {0, 1, 2});
  const Graph fused = apply_and_compare(g.m.graph(), fusion::fold_split_into_concat, 1);
  const Node* concat = nullptr;
  for (const Node& node : fused.nodes()) concat = node.op == OpKind::kConcat ? &node : concat;
  REQUIRE(concat != nullptr);
  REQUIRE(concat->inputs.size() == 2);
  CHECK(fused.value(concat->inputs[0]).name == g.m.graph().value(g.mixed).name);
  CHECK(count_nodes(fused, OpKind::kSplit) == 1);  // the second half still feeds the bottleneck

  // Planned as the CPU executor runs it: the Conv writes into the Concat's output, and the Split's
  // halves are views of it, so nothing is copied.
  std::mt19937 input_rng(22);
  const std::vector<Tensor> inputs = random_inputs_for(fused, input_rng);
  MemoryPlan plan;
  const std::vector<Tensor> outputs = run_planned(fused, inputs, 2, &plan);
  CHECK(max_relative_l2(outputs, run_graph(g.m.graph(), inputs, true)) <= kFusionTolerance);
  CHECK(plan.concats_aliased == 1);
  CHECK(plan.piece_views == 1);
  CHECK(verify_memory_plan(fused, plan).is_ok());
}

TEST_CASE("fold_split_into_concat: a Split whose pieces are all taken goes; others stay") {
  std::mt19937 rng(23);
  {
    GraphMaker m;  // Concat(Split(x)) alone: the Split is removed
    const ValueId x = m.node(OpKind::kRelu, {m.input({2, 6})});
    const std::vector<ValueId> pieces = m.node_with_outputs(OpKind::kSplit, {x, sizes(m, {2, 4})}, 2, axis_attr(1));
    m.output(m.node(OpKind::kConcat, {m.node(OpKind::kExp, {x}), pieces[0], pieces[1]}, axis_attr(-1)));
    const Graph fused = apply_and_compare(m.graph(), fusion::fold_split_into_concat, 1);
    CHECK(count_nodes(fused, OpKind::kSplit) == 0);
  }
  {
    C2f g;  // the halves swapped
    build_c2f(g, rng, {1, 0, 2});
    apply_and_compare(g.m.graph(), fusion::fold_split_into_concat, 0);
  }
  {
    GraphMaker m;  // one piece only, and a Split on another axis
    const ValueId x = m.input({2, 6});
    const std::vector<ValueId> cols = m.node_with_outputs(OpKind::kSplit, {x, sizes(m, {2, 4})}, 2, axis_attr(1));
    m.output(m.node(OpKind::kConcat, {cols[0], m.node(OpKind::kExp, {cols[1]})}, axis_attr(1)));
    const std::vector<ValueId> rows = m.node_with_outputs(OpKind::kSplit, {x, sizes(m, {1, 1})}, 2, axis_attr(0));
    m.output(m.node(OpKind::kConcat, {rows[0], rows[1]}, axis_attr(1)));
    apply_and_compare(m.graph(), fusion::fold_split_into_concat, 0);
  }
}

}  // namespace
}  // namespace edgefuse::test
