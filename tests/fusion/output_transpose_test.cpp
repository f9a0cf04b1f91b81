// fold_transpose_into_conv_output (fusion/): a 1x1 Conv whose output only a Transpose to
// channels-last reads writes the Transpose's output itself (kConvOutputChannelsLast), and the
// memory plan's views of graph outputs (PlanOptions::output_views): a detection head's
// Conv -> Transpose -> Reshape -> graph output becomes one Conv writing into the output's storage.
// Heads of awkward sizes (1, 6, 17, 50 and 64 channels, 13 x 13 to 47 x 45 positions, batch 2) on the
// optimised kernels on 1 and 2 threads and on the reference kernels, each against the unfused
// graph; YOLOv5's heads (Reshape into anchors, Transpose, Sigmoid) by groups of channels; Convs,
// Transposes and Reshapes the pass must leave alone; Reshapes whose input must stay in the arena.
#include <doctest/doctest.h>

#include <random>

#include "fusion/passes.h"
#include "runtime/executor.h"
#include "runtime/ops/conv_problem.h"
#include "tests/fusion/fusion_test_graphs.h"

namespace edgefuse::test {
namespace {

Attributes perm(std::vector<int64_t> order) {
  Attributes a;
  a.set("perm", std::move(order));
  return a;
}

Attributes silu() {
  Attributes a;
  a.set("fused_activation", std::string("silu"));
  return a;
}

struct Head {
  int64_t channels, out_channels, height, width;
  int64_t batch = 1;
};

// x -> 3x3 Conv (so the head reads an arena value) -> 1x1 Conv (SiLU) -> Transpose to
// channels-last -> Reshape to [N, H * W, M] -> graph output.
Graph head_graph(const Head& h, std::mt19937& rng) {
  GraphMaker m;
  const ValueId x = m.input({h.batch, h.channels, h.height, h.width});
  const ValueId features = m.node(OpKind::kConv, {x, m.random_constant({h.channels, h.channels, 3, 3}, rng, -0.3, 0.3)},
                                  same_padded_conv_attrs(3));
  Attributes pointwise = same_padded_conv_attrs(1);
  pointwise.set("fused_activation", std::string("silu"));
  const ValueId y = m.node(
      OpKind::kConv,
      {features, m.random_constant({h.out_channels, h.channels, 1, 1}, rng), m.random_constant({h.out_channels}, rng)},
      pointwise);
  const ValueId moved = m.node(OpKind::kTranspose, {y}, perm({0, 2, 3, 1}));
  const ValueId shape =
      m.constant(Tensor::from_vector(Shape{3}, std::vector<int64_t>{h.batch, h.height * h.width, h.out_channels}));
  m.output(m.node(OpKind::kReshape, {moved, shape}));
  return m.graph();
}

int changes_of(const std::vector<PassReport>& reports) {
  return pass_changes(reports, "fold_transpose_into_conv_output");
}

// `fused` against `graph` on random inputs drawn with `seed`: on the reference kernels, and planned
// on the optimised ones with 1 and 2 threads, each plan verified. The two plans, for the caller's checks.
std::vector<MemoryPlan> check_fused_runs(const Graph& graph, const Graph& fused, unsigned seed) {
  std::mt19937 input_rng(seed);
  const std::vector<Tensor> inputs = random_inputs_for(graph, input_rng);
  const std::vector<Tensor> expected = run_graph(graph, inputs, true);
  CHECK(max_relative_l2(run_graph(fused, inputs, true), expected) <= kFusionTolerance);
  std::vector<MemoryPlan> plans(2);
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    MemoryPlan& plan = plans[static_cast<size_t>(threads - 1)];
    CHECK(max_relative_l2(run_planned(fused, inputs, threads, &plan), expected) <= kFusionTolerance);
    CHECK(verify_memory_plan(fused, plan).is_ok());
  }
  return plans;
}

void check_head(const Head& h) {
  CAPTURE(h.out_channels);
  CAPTURE(h.height);
  std::mt19937 rng(50);
  const Graph graph = head_graph(h, rng);
  Graph fused = graph;
  CHECK(changes_of(optimize_checked(fused)) == 1);
  CHECK(count_nodes(fused, OpKind::kTranspose) == 0);
  const Node& head = fused.nodes()[fused.nodes().size() - 2];
  REQUIRE(head.op == OpKind::kConv);
  CHECK(head.attrs.get_int(kConvOutputChannelsLast, 0) == 1);

  for (const MemoryPlan& plan : check_fused_runs(graph, fused, 51)) {
    // The Reshape is a view of the graph output: the head writes into the output's storage, and
    // only the 3x3 Conv's output is in the arena.
    CHECK(plan.descs[static_cast<size_t>(head.outputs[0])].shape == Shape{h.batch, h.height, h.width, h.out_channels});
    CHECK(plan.output_views == 1);
    CHECK(plan.written_into_output[static_cast<size_t>(head.outputs[0])] == fused.outputs()[0]);
    CHECK(!plan.in_arena(head.outputs[0]));
    CHECK(plan.node_skipped.back());
  }
}

}  // namespace

TEST_CASE("fold_transpose_into_conv_output: heads of awkward sizes write channels-last into the graph output") {
  check_head({.channels = 8, .out_channels = 6, .height = 13, .width = 13});
  check_head({.channels = 16, .out_channels = 1, .height = 7, .width = 9});
  check_head({.channels = 12, .out_channels = 17, .height = 13, .width = 13, .batch = 2});
  // More output channels than a row block and than a tile's columns; 2 threads split the rows.
  check_head({.channels = 24, .out_channels = 50, .height = 16, .width = 16});
  // A block above kChannelsLastBlockFloats (conv_cpu.cpp): computed and transposed a panel of
  // columns at a time, the last panel partial.
  check_head({.channels = 8, .out_channels = 64, .height = 47, .width = 45});
}

// x -> 3x3 Conv -> 1x1 Conv to groups x values channels -> Reshape to [N, groups, values, H, W]
// -> Transpose moving the values last (perm) -> Sigmoid -> graph output: YOLOv5's head. Fused, the
// 1x1 Conv writes the Transpose's output with the Sigmoid as its epilogue.
Graph grouped_head_graph(const Head& h, int64_t groups, const std::vector<int64_t>& order, std::mt19937& rng) {
  GraphMaker m;
  const ValueId x = m.input({h.batch, h.channels, h.height, h.width});
  const ValueId features = m.node(OpKind::kConv, {x, m.random_constant({h.channels, h.channels, 3, 3}, rng, -0.3, 0.3)},
                                  same_padded_conv_attrs(3));
  const ValueId y = m.node(
      OpKind::kConv,
      {features, m.random_constant({h.out_channels, h.channels, 1, 1}, rng), m.random_constant({h.out_channels}, rng)},
      same_padded_conv_attrs(1));
  const ValueId shape = m.constant(
      Tensor::from_vector(Shape{5}, std::vector<int64_t>{h.batch, groups, h.out_channels / groups, h.height, h.width}));
  m.output(m.node(OpKind::kSigmoid, {m.node(OpKind::kTranspose, {m.node(OpKind::kReshape, {y, shape})}, perm(order))}));
  return m.graph();
}

TEST_CASE("fold_transpose_into_conv_output: YOLOv5's heads write channels-last by groups of channels") {
  struct Case {
    Head head;
    int64_t groups;
  };
  // YOLOv5's 3 anchors of 85 values (a tile's rows straddle the groups; at 40 x 41 in panels of
  // columns, conv_cpu.cpp's kChannelsLastBlockFloats), of 8, and 2 of 17 in batch 2.
  for (const Case& c : {Case{{.channels = 16, .out_channels = 255, .height = 10, .width = 12}, 3},
                        Case{{.channels = 16, .out_channels = 255, .height = 40, .width = 41}, 3},
                        Case{{.channels = 8, .out_channels = 24, .height = 13, .width = 13}, 3},
                        Case{{.channels = 12, .out_channels = 34, .height = 7, .width = 9, .batch = 2}, 2}}) {
    CAPTURE(c.head.out_channels);
    CAPTURE(c.groups);
    std::mt19937 rng(54);
    const Graph graph = grouped_head_graph(c.head, c.groups, {0, 1, 3, 4, 2}, rng);
    Graph fused = graph;
    CHECK(changes_of(optimize_checked(fused)) == 1);
    CHECK(count_nodes(fused, OpKind::kTranspose) == 0);
    CHECK(count_nodes(fused, OpKind::kReshape) == 0);
    // The Sigmoid after the Transpose is the Conv's epilogue now (fuse_conv_activation_after_transposes).
    CHECK(count_nodes(fused, OpKind::kSigmoid) == 0);
    CHECK(pass_changes(optimize_checked(fused = graph), "fuse_conv_activation_after_transposes") == 1);
    const Node& head = fused.nodes().back();
    REQUIRE(head.op == OpKind::kConv);
    CHECK(head.attrs.get_int(kConvOutputChannelsLast, 0) == 1);
    CHECK(head.attrs.get_int(kConvOutputChannelGroups, 0) == c.groups);
    CHECK(head.attrs.get_string("fused_activation", "") == "sigmoid");

    for (const MemoryPlan& plan : check_fused_runs(graph, fused, 55)) {
      CHECK(plan.descs[static_cast<size_t>(head.outputs[0])].shape ==
            Shape{c.head.batch, c.groups, c.head.height, c.head.width, c.head.out_channels / c.groups});
    }
  }
}

TEST_CASE("fold_transpose_into_conv_output leaves Reshapes that are not a split of the channels alone") {
  std::mt19937 rng(56);
  const Head h{.channels = 8, .out_channels = 24, .height = 6, .width = 6};
  // Another permutation after the split.
  Graph other_order = grouped_head_graph(h, 3, {0, 1, 4, 3, 2}, rng);
  CHECK(changes_of(optimize_checked(other_order)) == 0);
  CHECK(count_nodes(other_order, OpKind::kTranspose) == 1);
  // A Reshape that does not split the channels: [N, M, H, W] -> [N, 2, M, H / 2, W].
  GraphMaker m;
  const ValueId x = m.input({1, 8, 6, 6});
  const ValueId y = m.node(OpKind::kConv, {x, m.random_constant({24, 8, 1, 1}, rng)}, same_padded_conv_attrs(1));
  const ValueId shape = m.constant(Tensor::from_vector(Shape{5}, std::vector<int64_t>{1, 2, 24, 3, 6}));
  m.output(m.node(OpKind::kTranspose, {m.node(OpKind::kReshape, {y, shape})}, perm({0, 1, 3, 4, 2})));
  Graph rows_split = m.graph();
  CHECK(changes_of(optimize_checked(rows_split)) == 0);
  CHECK(fused_error(rows_split, m.graph(), 57) <= kFusionTolerance);
}

TEST_CASE("fold_transpose_into_conv_output leaves other Transposes and Convs alone") {
  std::mt19937 rng(52);
  GraphMaker m;
  const ValueId x = m.input({1, 4, 6, 6});
  const auto pointwise = [&](ValueId input, Attributes attrs = same_padded_conv_attrs(1)) {
    return m.node(OpKind::kConv, {input, m.random_constant({4, 4, 1, 1}, rng)}, std::move(attrs));
  };
  // Another permutation.
  m.output(m.node(OpKind::kTranspose, {pointwise(x)}, perm({0, 3, 1, 2})));
  // A 3x3 Conv.
  m.output(m.node(OpKind::kTranspose,
                  {m.node(OpKind::kConv, {x, m.random_constant({4, 4, 3, 3}, rng)}, same_padded_conv_attrs(3))},
                  perm({0, 2, 3, 1})));
  // A Conv with a residual.
  m.output(m.node(OpKind::kTranspose, {m.node(OpKind::kConv, {x, m.random_constant({4, 4, 1, 1}, rng), kNoValue, x})},
                  perm({0, 2, 3, 1})));
  // A Conv output read twice, and one that is a graph output.
  const ValueId shared = pointwise(x, silu());
  m.output(m.node(OpKind::kTranspose, {shared}, perm({0, 2, 3, 1})));
  m.output(m.node(OpKind::kRelu, {shared}));
  const ValueId kept = pointwise(x);
  m.output(m.node(OpKind::kTranspose, {kept}, perm({0, 2, 3, 1})));
  m.output(kept);
  // A grouped 1x1 Conv.
  Attributes grouped = same_padded_conv_attrs(1);
  grouped.set("group", int64_t{2});
  m.output(m.node(OpKind::kTranspose, {m.node(OpKind::kConv, {x, m.random_constant({4, 2, 1, 1}, rng)}, grouped)},
                  perm({0, 2, 3, 1})));

  Graph graph = m.graph();
  CHECK(changes_of(optimize_checked(graph)) == 0);
  CHECK(count_nodes(graph, OpKind::kTranspose) == 6);
  CHECK(fused_error(graph, m.graph(), 53) <= kFusionTolerance);
}

TEST_CASE("fold_transpose_into_conv_output is off for the CUDA backend, whose lowering keeps such Convs on the CPU") {
  std::mt19937 rng(54);
  const Graph graph = head_graph({.channels = 4, .out_channels = 6, .height = 5, .width = 5}, rng);
  Graph for_cuda = graph;
  CHECK(changes_of(optimize_checked(for_cuda, cuda_fusion_options())) == 0);
  CHECK(count_nodes(for_cuda, OpKind::kTranspose) == 1);
}

TEST_CASE("a channels-last output with a residual is refused by name") {
  std::mt19937 rng(55);
  GraphMaker m;
  const ValueId x = m.input({1, 4, 3, 3});
  Attributes attrs = same_padded_conv_attrs(1);
  attrs.set(kConvOutputChannelsLast, int64_t{1});
  m.output(m.node(OpKind::kConv, {x, m.random_constant({4, 4, 1, 1}, rng), kNoValue, x}, attrs));
  Result<Executor> executor = Executor::create(std::make_shared<const Graph>(m.graph()), ExecutorOptions{});
  REQUIRE(executor.is_ok());
  std::mt19937 input_rng(56);
  Result<std::vector<Tensor>> outputs = executor->run(random_inputs_for(m.graph(), input_rng));
  REQUIRE(!outputs.is_ok());
  CHECK(outputs.status().message().find(kConvOutputChannelsLast) != std::string::npos);
}

TEST_CASE("output views: a Reshape of a graph output copies only when its input must stay") {
  std::mt19937 rng(57);
  GraphMaker m;
  const ValueId x = m.input({1, 4, 6, 6});
  const ValueId shape = m.constant(Tensor::from_vector(Shape{2}, std::vector<int64_t>{1, 144}));
  // Viewed: a Sigmoid's output, read by the Reshape alone.
  m.output(m.node(OpKind::kReshape, {m.node(OpKind::kSigmoid, {x}), shape}));
  // Copied: the Reshape's input is read again after it, shares its bytes with another value (a
  // Relu in place), is the graph input, or is a graph output.
  const ValueId twice = m.node(OpKind::kSigmoid, {x});
  m.output(m.node(OpKind::kReshape, {twice, shape}));
  m.output(m.node(OpKind::kExp, {twice}));
  m.output(m.node(OpKind::kReshape, {m.node(OpKind::kRelu, {m.node(OpKind::kSigmoid, {x})}), shape}));
  m.output(m.node(OpKind::kReshape, {x, shape}));
  const ValueId exported = m.node(OpKind::kTanh, {x});
  m.output(exported);
  m.output(m.node(OpKind::kReshape, {exported, shape}));

  Result<MemoryPlan> plan = plan_memory(m.graph(), std::vector<TensorDesc>{{DType::kF32, {1, 4, 6, 6}}},
                                        Executor::plan_options(ExecutorOptions{}));
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  CHECK(plan->output_views == 1);
  CHECK(verify_memory_plan(m.graph(), *plan).is_ok());
  std::mt19937 input_rng(58);
  const std::vector<Tensor> inputs = random_inputs_for(m.graph(), input_rng);
  MemoryPlan used;
  for (int threads : {1, 2}) {
    CHECK(max_relative_l2(run_planned(m.graph(), inputs, threads, &used), run_graph(m.graph(), inputs, true)) <=
          kFusionTolerance);
    CHECK(used.output_views == 1);
  }
}

}  // namespace edgefuse::test
