// FLOP counts from a plan's shapes, checked against counts done by hand, and the roofline
// arithmetic against the board figures.
#include "runtime/cost_model.h"

#include <doctest/doctest.h>

#include "runtime/memory_plan.h"

namespace edgefuse {
namespace {

TEST_CASE("FLOPs: a conv counts its multiply-adds and its epilogue, movement counts nothing") {
  Graph graph;
  const ValueId x = graph.add_value("x", TensorDesc{DType::kF32, {1, 3, 7, 9}});
  graph.inputs().push_back(x);
  const ValueId w = graph.add_initializer("w", Tensor::empty(DType::kF32, {5, 3, 3, 3}));
  const ValueId y = graph.add_value("y", TensorDesc{DType::kF32, {}});
  const ValueId r = graph.add_value("r", TensorDesc{DType::kF32, {}});
  const ValueId t = graph.add_value("t", TensorDesc{DType::kF32, {}});
  Node conv{.op = OpKind::kConv, .name = "conv", .inputs = {x, w}, .outputs = {y}};
  conv.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  conv.attrs.set("fused_activation", std::string("relu"));
  graph.add_node(conv);
  Node relu{.op = OpKind::kRelu, .name = "relu", .inputs = {y}, .outputs = {r}};
  graph.add_node(relu);
  Node transpose{.op = OpKind::kTranspose, .name = "transpose", .inputs = {r}, .outputs = {t}};
  graph.add_node(transpose);
  graph.outputs().push_back(t);

  Result<MemoryPlan> plan = plan_memory(graph, std::vector<TensorDesc>{TensorDesc{DType::kF32, {1, 3, 7, 9}}});
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  // Y is [1, 5, 7, 9] = 315 outputs, each 3 x 3 x 3 = 27 multiply-adds, plus the fused relu.
  CHECK(node_flops(graph, *plan, 0) == 2 * 315 * 27 + 315);
  CHECK(node_flops(graph, *plan, 1) == 315);
  CHECK(node_flops(graph, *plan, 2) == 0);
  CHECK(graph_flops(graph, *plan) == 2 * 315 * 27 + 2 * 315);
}

TEST_CASE("roofline: the slower of memory and compute time, and the board's ridge point") {
  const BoardSpec* orin = find_board("orin-nano");
  REQUIRE(orin != nullptr);
  CHECK(find_board("tx2") == nullptr);
  // 68 MB at 68 GB/s is 1 ms; 640 MFLOP at 1280 GFLOPS is 0.5 ms.
  const RooflineEstimate memory = roofline(*orin, 68e6, 640e6);
  CHECK(memory.memory_ms == doctest::Approx(1.0));
  CHECK(memory.compute_ms == doctest::Approx(0.5));
  CHECK(memory.estimate_ms == doctest::Approx(1.0));
  CHECK(memory.memory_bound);
  CHECK(memory.ridge_intensity == doctest::Approx(1280.0 / 68.0));
  const RooflineEstimate compute = roofline(*orin, 6.8e6, 640e6);
  CHECK_FALSE(compute.memory_bound);
  CHECK(compute.estimate_ms == doctest::Approx(0.5));
  for (const BoardSpec& board : board_specs()) {
    CHECK(board.bandwidth_gb_s > 0);
    CHECK(board.fp32_gflops > 0);
  }
}

}  // namespace
}  // namespace edgefuse
