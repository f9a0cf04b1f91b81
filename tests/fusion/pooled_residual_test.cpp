// fold_max_pool_into_conv_residual (fusion/): a 1x1 Conv whose residual is a 2 x 2, stride 2
// MaxPool reads the MaxPool's input through the pool (kConvResidualMaxPool), the MaxPool gone.
// BlazeFace's downsampling block (depthwise 3x3 stride 2, 1x1, Add of its max-pooled input padded
// with zero channels, Relu) on the optimised kernels: as one paired kernel above the pair size, as
// a memory pair below it, with the 1x1 alone (its tasks' columns ending mid-row, on 1 and 2
// threads), the residual before or after the activation; each against the unfused graph on the
// reference kernels. Pools of other windows, strides or sizes, and pools read elsewhere stay.
#include <doctest/doctest.h>

#include <random>

#include "fusion/passes.h"
#include "runtime/executor.h"
#include "runtime/ops/conv_problem.h"
#include "tests/fusion/fusion_test_graphs.h"

namespace edgefuse::test {
namespace {

Attributes pool_attrs(int64_t kernel, int64_t stride) {
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{kernel, kernel});
  a.set("strides", std::vector<int64_t>{stride, stride});
  return a;
}

// Concat(x, zeros) on channels, x having `channels` of `total`.
ValueId zero_padded(GraphMaker& m, ValueId x, int64_t channels, int64_t total, int64_t h, int64_t w) {
  Attributes axis;
  axis.set("axis", int64_t{1});
  return m.node(OpKind::kConcat, {x, m.constant(Tensor::zeros(DType::kF32, {1, total - channels, h, w}))}, axis);
}

struct Block {
  int64_t channels, out_channels, height, width;
  bool depthwise = true;    // else a dense 3x3 stride 2 Conv feeds the 1x1: no pair
  bool after_relu = false;  // Add(Relu(1x1), pool) rather than Relu(Add(1x1, pool))
  int64_t batch = 1;
};

// x -> [depthwise or dense 3x3 / 2] -> 1x1 -> + MaxPool(x) (zero-padded to out_channels) -> Relu.
Graph downsampling_block(const Block& b, std::mt19937& rng) {
  GraphMaker m;
  const ValueId x = m.input({b.batch, b.channels, b.height, b.width});
  const ValueId first =
      b.depthwise ? m.node(OpKind::kConv,
                           {x, m.random_constant({b.channels, 1, 3, 3}, rng), m.random_constant({b.channels}, rng)},
                           same_padded_conv_attrs(3, b.channels, 2))
                  : m.node(OpKind::kConv, {x, m.random_constant({b.channels, b.channels, 3, 3}, rng)},
                           same_padded_conv_attrs(3, 1, 2));
  const ValueId pw = m.node(
      OpKind::kConv,
      {first, m.random_constant({b.out_channels, b.channels, 1, 1}, rng), m.random_constant({b.out_channels}, rng)},
      same_padded_conv_attrs(1));
  ValueId pooled = m.node(OpKind::kMaxPool, {x}, pool_attrs(2, 2));
  if (b.out_channels > b.channels) {
    pooled = zero_padded(m, pooled, b.channels, b.out_channels, b.height / 2, b.width / 2);
  }
  if (b.after_relu) {
    m.output(m.node(OpKind::kAdd, {m.node(OpKind::kRelu, {pw}), pooled}));
  } else {
    m.output(m.node(OpKind::kRelu, {m.node(OpKind::kAdd, {pw, pooled})}));
  }
  return m.graph();
}

int pooled_changes(const std::vector<PassReport>& reports) {
  return pass_changes(reports, "fold_max_pool_into_conv_residual");
}

// Folds the block's pool and checks the optimised kernels on 1 and 2 threads, and the reference
// kernels, against the unfused graph; `pairs`: kernel pairs the plan takes.
void check_block(const Block& b, int pairs) {
  std::mt19937 rng(40);
  const Graph graph = downsampling_block(b, rng);
  Graph fused = graph;
  CHECK(pooled_changes(optimize_checked(fused)) == 1);
  CHECK(count_nodes(fused, OpKind::kMaxPool) == 0);
  CHECK(count_nodes(fused, OpKind::kConcat) == 0);
  const Node& pointwise = fused.nodes().back();
  REQUIRE(pointwise.op == OpKind::kConv);
  CHECK(pointwise.attrs.get_int(kConvResidualMaxPool, 0) == 2);
  CHECK(pointwise.inputs[3] == fused.inputs()[0]);

  std::mt19937 input_rng(41);
  const std::vector<Tensor> inputs = random_inputs_for(graph, input_rng);
  const std::vector<Tensor> expected = run_graph(graph, inputs, true);
  CHECK(max_relative_l2(run_graph(fused, inputs, true), expected) <= kFusionTolerance);
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    MemoryPlan plan;
    CHECK(max_relative_l2(run_planned(fused, inputs, threads, &plan), expected) <= kFusionTolerance);
    CHECK(plan.kernel_pairs == pairs);
  }
  // With the Conv pairs off (ExecutorOptions::conv_pairs), each Conv runs alone, pooling its residual.
  Result<Executor> alone =
      Executor::create(std::make_shared<const Graph>(fused), ExecutorOptions{.threads = 2, .conv_pairs = false});
  REQUIRE(alone.is_ok());
  Result<std::vector<Tensor>> outputs = alone->run(inputs);
  REQUIRE_MESSAGE(outputs.is_ok(), outputs.status().to_string());
  CHECK(max_relative_l2(*outputs, expected) <= kFusionTolerance);
  REQUIRE(alone->memory_plan() != nullptr);
  CHECK(alone->memory_plan()->kernel_pairs == 0);
}

}  // namespace

TEST_CASE("fold_max_pool_into_conv_residual: BlazeFace's downsampling block as one paired kernel") {
  // 24 -> 28 channels from 128 x 128: the tensors exceed the pair size.
  check_block({.channels = 24, .out_channels = 28, .height = 128, .width = 128}, 1);
}

TEST_CASE("fold_max_pool_into_conv_residual: a small block as a memory pair, and its residual after the activation") {
  // The block's input is the largest value: the pair saves the depthwise output's bytes.
  check_block({.channels = 24, .out_channels = 28, .height = 32, .width = 32}, 1);
  check_block({.channels = 16, .out_channels = 16, .height = 20, .width = 36, .after_relu = true, .batch = 2}, 1);
}

TEST_CASE("fold_max_pool_into_conv_residual: the 1x1 alone, tasks ending mid-row") {
  // A dense 3x3 before the 1x1 (no pair): outputs of 13 and 9 columns split between tasks.
  check_block({.channels = 8, .out_channels = 12, .height = 26, .width = 26, .depthwise = false}, 0);
  check_block({.channels = 5, .out_channels = 5, .height = 18, .width = 18, .depthwise = false, .batch = 2}, 0);
}

TEST_CASE("fold_max_pool_into_conv_residual leaves other pools, pools read elsewhere and other Convs alone") {
  std::mt19937 rng(42);
  GraphMaker m;
  const ValueId x = m.input({1, 4, 8, 8});
  const ValueId odd = m.input({1, 4, 9, 9});
  const auto pointwise = [&](ValueId input) {
    return m.node(OpKind::kConv, {input, m.random_constant({4, 4, 1, 1}, rng)}, same_padded_conv_attrs(1));
  };
  const auto conv3x3 = [&](ValueId input) {
    return m.node(OpKind::kConv, {input, m.random_constant({4, 4, 3, 3}, rng)}, same_padded_conv_attrs(3));
  };
  const ValueId half =
      m.node(OpKind::kConv, {x, m.random_constant({4, 4, 1, 1}, rng)}, same_padded_conv_attrs(1, 1, 2));
  // A 3 x 3 window (stride 2, padding 1: the same 4 x 4 output).
  Attributes padded = pool_attrs(3, 2);
  padded.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  m.output(m.node(OpKind::kAdd, {pointwise(half), m.node(OpKind::kMaxPool, {x}, padded)}));
  // Stride 1 over a 5 x 5 input gives 4 x 4 too.
  const ValueId small = m.input({1, 4, 5, 5});
  const ValueId half2 =
      m.node(OpKind::kConv, {x, m.random_constant({4, 4, 1, 1}, rng)}, same_padded_conv_attrs(1, 1, 2));
  m.output(m.node(OpKind::kAdd, {pointwise(half2), m.node(OpKind::kMaxPool, {small}, pool_attrs(2, 1))}));
  // An odd input: the pool drops its last row and column.
  const ValueId half3 =
      m.node(OpKind::kConv, {x, m.random_constant({4, 4, 1, 1}, rng)}, same_padded_conv_attrs(1, 1, 2));
  m.output(m.node(OpKind::kAdd, {pointwise(half3), m.node(OpKind::kMaxPool, {odd}, pool_attrs(2, 2))}));
  // The pool is also a graph output.
  const ValueId shared = m.node(OpKind::kMaxPool, {x}, pool_attrs(2, 2));
  const ValueId half4 =
      m.node(OpKind::kConv, {x, m.random_constant({4, 4, 1, 1}, rng)}, same_padded_conv_attrs(1, 1, 2));
  m.output(m.node(OpKind::kAdd, {pointwise(half4), shared}));
  m.output(shared);
  // A 3x3 Conv adds the pool.
  const ValueId half5 =
      m.node(OpKind::kConv, {x, m.random_constant({4, 4, 1, 1}, rng)}, same_padded_conv_attrs(1, 1, 2));
  m.output(m.node(OpKind::kAdd, {conv3x3(half5), m.node(OpKind::kMaxPool, {x}, pool_attrs(2, 2))}));

  Graph graph = m.graph();
  CHECK(pooled_changes(optimize_checked(graph)) == 0);
  CHECK(count_nodes(graph, OpKind::kMaxPool) == 5);
  CHECK(fused_error(graph, m.graph(), 43) <= kFusionTolerance);
}

TEST_CASE("fold_max_pool_into_conv_residual is off for the CUDA backend, whose lowering keeps such Convs on the CPU") {
  std::mt19937 rng(44);
  const Graph graph = downsampling_block({.channels = 8, .out_channels = 8, .height = 16, .width = 16}, rng);
  Graph for_cuda = graph;
  CHECK(pooled_changes(optimize_checked(for_cuda, cuda_fusion_options())) == 0);
  CHECK(count_nodes(for_cuda, OpKind::kMaxPool) == 1);
}

}  // namespace edgefuse::test
