// fuse_pointwise_chains on hand-built graphs: what becomes one PointwiseChain (counts before and
// after, the chain's inputs and constants), what the legality rules keep apart, and fused ==
// unfused numerics on random inputs with both kernel sets.
#include <doctest/doctest.h>

#include <random>

#include "fusion/passes.h"
#include "runtime/ops/pointwise_chain.h"
#include "tests/fusion/fusion_test_graphs.h"

namespace edgefuse::test {
namespace {

ValueId scalar(GraphMaker& m, float value) {
  return m.constant(Tensor::scalar<float>(value));
}

const Node& only_chain(const Graph& graph) {
  REQUIRE(count_nodes(graph, OpKind::kPointwiseChain) == 1);
  for (const Node& node : graph.nodes()) {
    if (node.op == OpKind::kPointwiseChain) return node;
  }
  FAIL("unreachable");
  return graph.nodes().front();
}

TEST_CASE("fuse_pointwise_chains: a YOLOv5-style box decode becomes one chain with its constants folded in") {
  // xy = (sigmoid(t) * 2 - 0.5 + grid) * stride: five ops, two tensors and three scalar constants.
  std::mt19937 rng(1);
  GraphMaker m;
  const ValueId t = m.input({1, 3, 8, 8, 2});
  const ValueId grid = m.random_constant({1, 1, 8, 8, 2}, rng, 0, 8);
  ValueId v = m.node(OpKind::kSigmoid, {t});
  v = m.node(OpKind::kMul, {v, scalar(m, 2.0f)});
  v = m.node(OpKind::kSub, {v, scalar(m, 0.5f)});
  v = m.node(OpKind::kAdd, {grid, v});
  m.output(m.node(OpKind::kMul, {scalar(m, 16.0f), v}));

  const Graph fused = apply_and_compare(m.graph(), fusion::fuse_pointwise_chains, 1);
  CHECK(fused.nodes().size() == 1);
  const Node& chain = only_chain(fused);
  REQUIRE(chain.inputs.size() == 2);  // t and grid; the scalars are step constants
  CHECK(fused.value(chain.inputs[0]).name == m.graph().value(t).name);
  const PointwiseChain program = pointwise_chain(chain).value();
  REQUIRE(program.steps.size() == 5);
  CHECK(program.steps[1].operand == -1);
  CHECK(program.steps[1].alpha == 2.0f);
  CHECK(program.steps[3].operand == 1);
  CHECK(program.steps[3].chain_on_right);
  CHECK(program.steps[4].alpha == 16.0f);
  CHECK(fused.value(fused.outputs()[0]).name == m.graph().value(m.graph().outputs()[0]).name);
  CHECK(chain.name == m.graph().nodes().back().name);
}

TEST_CASE("fuse_pointwise_chains: SiLU, HardSwish tail and a Clip after a non-Conv producer") {
  std::mt19937 rng(2);
  GraphMaker m;
  const ValueId a = m.input({2, 4, 5});
  const ValueId b = m.input({2, 4, 5});
  const ValueId sum = m.node(OpKind::kAdd, {a, b});  // read twice below: stays on its own
  const ValueId silu = m.node(OpKind::kMul, {m.node(OpKind::kSigmoid, {sum}), sum});
  const ValueId clipped = m.node(OpKind::kClip, {silu, scalar(m, -0.25f), scalar(m, 0.75f)});
  Attributes alpha;
  alpha.set("alpha", 0.2f);
  m.output(m.node(OpKind::kLeakyRelu, {m.node(OpKind::kDiv, {clipped, m.random_constant({4, 1}, rng, 1, 2)})}, alpha));

  const Graph fused = apply_and_compare(m.graph(), fusion::fuse_pointwise_chains, 1);
  CHECK(count_nodes(fused, OpKind::kAdd) == 1);
  const Node& chain = only_chain(fused);
  CHECK(chain.inputs.size() == 2);  // sum (also the Mul's operand) and the per-row divisor
  const PointwiseChain program = pointwise_chain(chain).value();
  REQUIRE(program.steps.size() == 5);
  CHECK(program.steps[1].operand == 0);
  CHECK(program.steps[2].lo == -0.25f);
  CHECK(program.steps[2].hi == 0.75f);
  CHECK(program.steps[4].alpha == 0.2f);
}

TEST_CASE("fuse_pointwise_chains: graph outputs, second readers and widening broadcasts end a chain") {
  std::mt19937 rng(3);
  GraphMaker m;
  const ValueId x = m.input({3, 4});
  const ValueId r = m.node(OpKind::kRelu, {x});
  const ValueId e = m.node(OpKind::kExp, {r});
  m.output(e);  // an intermediate graph output: the chain stops after it
  const ValueId t = m.node(OpKind::kTanh, {e});
  const ValueId s = m.node(OpKind::kSigmoid, {t});
  const ValueId shared = m.node(OpKind::kSqrt, {s});  // read by two nodes: the chain stops here
  m.output(m.node(OpKind::kRelu, {shared}));
  m.output(m.node(OpKind::kExp, {shared}));
  const ValueId narrow = m.input({3, 1});
  const ValueId n = m.node(OpKind::kSigmoid, {narrow});
  m.output(m.node(OpKind::kAdd, {n, m.random_constant({3, 4}, rng)}));  // widens [3, 1]: not fused

  const Graph fused = apply_and_compare(m.graph(), fusion::fuse_pointwise_chains, 2);
  CHECK(count_nodes(fused, OpKind::kPointwiseChain) == 2);  // Relu+Exp, Tanh+Sigmoid+Sqrt
  CHECK(count_nodes(fused, OpKind::kRelu) == 1);
  CHECK(count_nodes(fused, OpKind::kExp) == 1);
  CHECK(count_nodes(fused, OpKind::kSigmoid) == 1);
  CHECK(count_nodes(fused, OpKind::kAdd) == 1);
}

TEST_CASE("fuse_pointwise_chains: long chains and many inputs split at the limits") {
  std::mt19937 rng(4);
  GraphMaker m;
  const ValueId x = m.input({2, 6});
  ValueId v = x;
  for (int i = 0; i < kMaxChainSteps + 3; ++i) v = m.node(OpKind::kAdd, {v, m.random_constant({2, 6}, rng)});
  m.output(v);
  // Each tensor operand takes an input slot: 3 operands per chain with the head, so 11 Adds
  // become chains of 3, 3, 3 and 2.
  const Graph fused = apply_and_compare(m.graph(), fusion::fuse_pointwise_chains, 4);
  CHECK(count_nodes(fused, OpKind::kPointwiseChain) == 4);
  CHECK(count_nodes(fused, OpKind::kAdd) == 0);
  for (const Node& node : fused.nodes()) {
    if (node.op == OpKind::kPointwiseChain) CHECK(node.inputs.size() <= static_cast<size_t>(kMaxChainInputs));
  }

  GraphMaker scalars;
  ValueId w = scalars.input({5});
  for (int i = 0; i < kMaxChainSteps + 2; ++i) w = scalars.node(OpKind::kMul, {w, scalar(scalars, 1.01f)});
  scalars.output(w);
  const Graph split = apply_and_compare(scalars.graph(), fusion::fuse_pointwise_chains, 2);
  CHECK(split.nodes().size() == 2);  // 8 steps, then 2
}

TEST_CASE("fuse_pointwise_chains: dynamic shapes and run-time Clip bounds are left alone") {
  GraphMaker m;
  const ValueId dynamic = m.input({-1, 4});
  m.output(m.node(OpKind::kRelu, {m.node(OpKind::kSigmoid, {dynamic})}));
  const ValueId x = m.input({4});
  const ValueId bound = m.input({1});
  m.output(m.node(OpKind::kRelu, {m.node(OpKind::kClip, {x, bound})}));
  Graph graph = m.graph();
  PassReport report;
  REQUIRE(fusion::fuse_pointwise_chains(graph, report).is_ok());
  CHECK(report.changes == 0);
  CHECK(graph.nodes().size() == 4);
}

}  // namespace
}  // namespace edgefuse::test
