#include "runtime/memory_plan.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "runtime/executor.h"
#include "tests/runtime/random_graph.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

constexpr size_t kBuffer = 4 * 4 * 8 * sizeof(float);  // 512 bytes: a multiple of kPlanAlignment

// x -> Relu a -> Relu b -> Relu c -> Relu y: each intermediate dies at the next node.
std::shared_ptr<Graph> relu_chain() {
  auto graph = std::make_shared<Graph>();
  const TensorDesc desc{DType::kF32, {1, 4, 4, 8}};
  ValueId previous = graph->add_value("x", desc);
  graph->inputs().push_back(previous);
  for (const char* name : {"a", "b", "c", "y"}) {
    const ValueId next = graph->add_value(name, desc);
    graph->add_node(Node{.op = OpKind::kRelu, .name = name, .inputs = {previous}, .outputs = {next}});
    previous = next;
  }
  graph->outputs().push_back(previous);
  return graph;
}

size_t aligned(size_t bytes) {
  return (bytes + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment;
}

}  // namespace

TEST_CASE("a chain of pointwise ops needs two buffers: a value dies when the next node has read it") {
  const auto graph = relu_chain();
  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1), PlanOptions{.in_place = false});
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  REQUIRE(verify_memory_plan(*graph, *plan).is_ok());
  const auto id = [&](const char* name) { return static_cast<size_t>(*graph->find_value(name)); };
  CHECK(plan->offset[id("x")] == -1);  // graph input
  CHECK(plan->offset[id("y")] == -1);  // graph output: the caller keeps it
  CHECK(plan->first_node[id("b")] == 1);
  CHECK(plan->last_node[id("b")] == 2);
  CHECK(plan->offset[id("a")] != plan->offset[id("b")]);
  CHECK(plan->offset[id("c")] == plan->offset[id("a")]);  // a is dead once b exists
  CHECK(plan->arena_bytes == 2 * aligned(kBuffer));
  CHECK(plan->peak_live_bytes == 2 * aligned(kBuffer));
  CHECK(plan->unplanned_bytes == 3 * kBuffer);
  CHECK(plan->activation_bytes_moved == 4 * 2 * kBuffer);  // each node reads one and writes one
}

TEST_CASE("a kernel pair stores nothing between its nodes and keeps the first one's input alive through the second") {
  const auto graph = relu_chain();  // x -> a -> b -> c -> y, nodes 0 .. 3
  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  const auto id = [&](const char* name) { return static_cast<size_t>(*graph->find_value(name)); };
  PlanOptions options{.in_place = false};
  options.kernel_pair = [](const Node& first, const Node&, std::span<const TensorDesc>) { return first.name == "b"; };
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1), options);
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  REQUIRE(verify_memory_plan(*graph, *plan).is_ok());
  CHECK(plan->kernel_pairs == 1);
  CHECK(plan->paired_with == std::vector<NodeId>{-1, 2, -1, -1});
  CHECK(plan->between_pair[id("b")]);
  CHECK(plan->offset[id("b")] == -1);
  // Node 2 writes c while the pair still reads a: a lives through node 2 and c takes other bytes.
  CHECK(plan->last_node[id("a")] == 2);
  CHECK(plan->offset[id("c")] != plan->offset[id("a")]);
  CHECK(plan->arena_bytes == 2 * aligned(kBuffer));
  CHECK(plan->activation_bytes_moved == 4 * 2 * kBuffer - 2 * kBuffer);  // b neither written nor read

  // Every node offered: pairs (0, 1) and (2, 3); a node is in one pair only.
  options.kernel_pair = [](const Node&, const Node&, std::span<const TensorDesc>) { return true; };
  plan = plan_memory(*graph, std::span(&input, 1), options);
  REQUIRE(plan.is_ok());
  CHECK(plan->paired_with == std::vector<NodeId>{1, -1, 3, -1});
  CHECK(plan->arena_bytes == aligned(kBuffer));  // b, the only value stored, read by the pair (2, 3)
  CHECK(plan->last_node[id("b")] == 3);
}

TEST_CASE("a kernel pair that can run in place writes its output over its dying input, chains of them too") {
  // x -> a -> b -> c -> d -> e -> y (Relus, nodes 0 .. 5), pairs (1, 2) and (3, 4): a -> [b] -> c
  // and c -> [d] -> e, where a and c die.
  auto graph = std::make_shared<Graph>();
  const TensorDesc desc{DType::kF32, {1, 4, 4, 8}};
  ValueId previous = graph->add_value("x", desc);
  graph->inputs().push_back(previous);
  for (const char* name : {"a", "b", "c", "d", "e", "y"}) {
    const ValueId next = graph->add_value(name, desc);
    graph->add_node(Node{.op = OpKind::kRelu, .name = name, .inputs = {previous}, .outputs = {next}});
    previous = next;
  }
  graph->outputs().push_back(previous);
  const auto id = [&](const char* name) { return static_cast<size_t>(*graph->find_value(name)); };
  PlanOptions options{.in_place = false};
  options.kernel_pair = [](const Node& first, const Node&, std::span<const TensorDesc>) {
    return first.name == "b" || first.name == "d";
  };
  options.kernel_pair_in_place = [](const Node&, const Node&, std::span<const TensorDesc>) { return true; };
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&desc, 1), options);
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  REQUIRE(verify_memory_plan(*graph, *plan).is_ok());
  CHECK(plan->kernel_pairs == 2);
  CHECK(plan->in_place_of[id("c")] == static_cast<ValueId>(id("a")));
  CHECK(plan->in_place_of[id("e")] == static_cast<ValueId>(id("c")));
  CHECK(plan->offset[id("c")] == plan->offset[id("a")]);
  CHECK(plan->offset[id("e")] == plan->offset[id("a")]);
  CHECK(plan->arena_bytes == aligned(kBuffer));  // a, c and e share one buffer; b and d are not stored

  // Without the backend's say-so, or with a read after the pair, the output takes other bytes.
  options.kernel_pair_in_place = nullptr;
  plan = plan_memory(*graph, std::span(&desc, 1), options);
  REQUIRE(plan.is_ok());
  CHECK(plan->in_place_of[id("c")] == kNoValue);
  CHECK(plan->offset[id("c")] != plan->offset[id("a")]);
  options.kernel_pair_in_place = [](const Node&, const Node&, std::span<const TensorDesc>) { return true; };
  const ValueId late = graph->add_value("late", desc);
  graph->add_node(
      Node{.op = OpKind::kAdd, .name = "late", .inputs = {previous, *graph->find_value("a")}, .outputs = {late}});
  graph->outputs() = {late};
  plan = plan_memory(*graph, std::span(&desc, 1), options);
  REQUIRE(plan.is_ok());
  REQUIRE(verify_memory_plan(*graph, *plan).is_ok());
  CHECK(plan->in_place_of[id("c")] == kNoValue);  // a is read at the end
  CHECK(plan->offset[id("c")] != plan->offset[id("a")]);
  CHECK(plan->in_place_of[id("e")] == static_cast<ValueId>(id("c")));
}

namespace {

TensorDesc planes_8x8(int64_t channels) {
  return TensorDesc{DType::kF32, {1, channels, 8, 8}};
}

// Adds Conv `name` over 8 x 8 planes of `in` (`in_channels` of them) with zero weights, `out`
// channels, a square kernel with "same" padding, `group` groups and an optional residual; returns
// its output.
ValueId add_conv(Graph& graph, const char* name, ValueId in, int64_t in_channels, int64_t out, int64_t kernel,
                 int64_t group, ValueId residual = kNoValue) {
  const ValueId w = graph.add_initializer(std::string(name) + "_w",
                                          Tensor::zeros(DType::kF32, {out, in_channels / group, kernel, kernel}));
  const ValueId y = graph.add_value(name, planes_8x8(out));
  Node node{.op = OpKind::kConv, .name = name, .inputs = {in, w}, .outputs = {y}};
  if (residual != kNoValue) node.inputs = {in, w, kNoValue, residual};
  node.attrs.set("group", group);
  node.attrs.set("pads", std::vector<int64_t>(4, kernel / 2));
  graph.add_node(std::move(node));
  return y;
}

// x -> 1x1 Conv a -> depthwise 3x3 b -> 1x1 Conv c (8 -> 12 channels) -> 1x1 Conv d (12 -> `last`
// channels) -> Relu y, all 8 x 8: a dies in the pair (b, c), whose output is the wider.
std::shared_ptr<Graph> widening_block(int64_t last) {
  auto graph = std::make_shared<Graph>();
  const ValueId x = graph->add_value("x", planes_8x8(8));
  graph->inputs().push_back(x);
  const ValueId a = add_conv(*graph, "a", x, 8, 8, 1, 1);
  const ValueId b = add_conv(*graph, "b", a, 8, 8, 3, 8);
  const ValueId c = add_conv(*graph, "c", b, 8, 12, 1, 1);
  const ValueId d = add_conv(*graph, "d", c, 12, last, 1, 1);
  const ValueId y = graph->add_value("y", planes_8x8(last));
  graph->add_node(Node{.op = OpKind::kRelu, .name = "y", .inputs = {d}, .outputs = {y}});
  graph->outputs().push_back(y);
  return graph;
}

// No pair for speed; a memory pair only of node b and only with its output over `target`.
PlanOptions memory_pair_of_b(MemoryPairTarget target) {
  PlanOptions options{.in_place = false};
  options.kernel_pair = [](const Node&, const Node&, std::span<const TensorDesc>) { return false; };
  options.memory_pair = [target](const Node& first, const Node&, std::span<const TensorDesc>, MemoryPairTarget asked) {
    return first.name == "b" && asked == target;
  };
  return options;
}

}  // namespace

TEST_CASE("a memory pair runs in place where the largest values live, and its wider output sizes the buffer") {
  const TensorDesc input = planes_8x8(8);
  PlanOptions options = memory_pair_of_b(MemoryPairTarget::kInput);
  const size_t plane_bytes = 8 * 8 * sizeof(float);

  auto graph = widening_block(4);
  const auto id = [&](const char* name) { return static_cast<size_t>(*graph->find_value(name)); };
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1), options);
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  REQUIRE(verify_memory_plan(*graph, *plan).is_ok());
  CHECK(plan->kernel_pairs == 1);
  CHECK(plan->memory_pairs == 1);
  CHECK(plan->kernel_pairs_in_place == 1);
  CHECK(plan->paired_with == std::vector<NodeId>{-1, 2, -1, -1, -1});
  CHECK(plan->pair_any_size == std::vector<bool>{false, true, false, false, false});
  CHECK(plan->in_place_of[id("c")] == static_cast<ValueId>(id("a")));
  CHECK(plan->offset[id("c")] == plan->offset[id("a")]);
  // a and c in one buffer of c's size, d in another; b is not stored.
  CHECK(plan->arena_bytes == aligned(12 * plane_bytes) + aligned(4 * plane_bytes));

  // A value elsewhere more than twice b's size (d's 64 channels): no pair for memory in place.
  // (With bytes of its own, the pair of d and the Relu reading it would qualify: d is the largest.)
  graph = widening_block(64);
  options.memory_pair = [](const Node&, const Node&, std::span<const TensorDesc>, MemoryPairTarget target) {
    return target != MemoryPairTarget::kOwnBytes;
  };
  plan = plan_memory(*graph, std::span(&input, 1), options);
  REQUIRE(plan.is_ok());
  CHECK(plan->kernel_pairs == 0);
  CHECK(plan->memory_pairs == 0);
  CHECK(plan->offset[id("c")] != plan->offset[id("a")]);
}

TEST_CASE("a memory pair with its output in bytes of its own saves only the value between") {
  const TensorDesc input = planes_8x8(8);
  const size_t plane_bytes = 8 * 8 * sizeof(float);
  auto graph = widening_block(4);
  const auto id = [&](const char* name) { return static_cast<size_t>(*graph->find_value(name)); };
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1), memory_pair_of_b(MemoryPairTarget::kOwnBytes));
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  REQUIRE(verify_memory_plan(*graph, *plan).is_ok());
  CHECK(plan->kernel_pairs == 1);
  CHECK(plan->memory_pairs == 1);
  CHECK(plan->kernel_pairs_in_place == 0);
  CHECK(plan->paired_with == std::vector<NodeId>{-1, 2, -1, -1, -1});
  CHECK(plan->pair_any_size == std::vector<bool>{false, true, false, false, false});
  CHECK(plan->between_pair[id("b")]);
  CHECK(plan->in_place_of[id("c")] == kNoValue);
  // a (8 planes) lives through the pair beside c (12); b is not stored, and d (4) takes a's bytes
  // or others once a dies: at most a and c at once.
  CHECK(plan->offset[id("c")] != plan->offset[id("a")]);
  CHECK(plan->arena_bytes == aligned(8 * plane_bytes) + aligned(12 * plane_bytes));
}

TEST_CASE("a memory pair whose input lives on writes its output over the residual it adds") {
  // x -> 1x1 Conv a -> Relu r; a -> depthwise 3x3 b -> 1x1 Conv c (8 -> 12 channels, adding r) ->
  // 1x1 Conv y; Relu z reads a last. All 8 x 8; y and z are the graph's outputs.
  auto graph = std::make_shared<Graph>();
  const ValueId x = graph->add_value("x", planes_8x8(8));
  graph->inputs().push_back(x);
  const ValueId a = add_conv(*graph, "a", x, 8, 8, 1, 1);
  const ValueId r = graph->add_value("r", planes_8x8(8));
  graph->add_node(Node{.op = OpKind::kRelu, .name = "r", .inputs = {a}, .outputs = {r}});
  const ValueId b = add_conv(*graph, "b", a, 8, 8, 3, 8);
  const ValueId c = add_conv(*graph, "c", b, 8, 12, 1, 1, r);
  const ValueId y = add_conv(*graph, "y", c, 12, 4, 1, 1);
  const ValueId z = graph->add_value("z", planes_8x8(8));
  graph->add_node(Node{.op = OpKind::kRelu, .name = "z", .inputs = {a}, .outputs = {z}});
  graph->outputs() = {y, z};

  const TensorDesc input = planes_8x8(8);
  PlanOptions options{.in_place = false};
  options.kernel_pair = [](const Node&, const Node&, std::span<const TensorDesc>) { return false; };
  options.memory_pair = [](const Node&, const Node&, std::span<const TensorDesc>, MemoryPairTarget) { return true; };
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1), options);
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  REQUIRE(verify_memory_plan(*graph, *plan).is_ok());
  const auto at = [](ValueId v) { return static_cast<size_t>(v); };
  CHECK(plan->memory_pairs == 1);
  CHECK(plan->paired_with[2] == 3);
  CHECK(plan->in_place_of[at(c)] == r);  // not a: z reads it after the pair
  CHECK(plan->offset[at(c)] == plan->offset[at(r)]);
  const size_t plane_bytes = 8 * 8 * sizeof(float);
  CHECK(plan->arena_bytes == aligned(8 * plane_bytes) + aligned(12 * plane_bytes));  // a; r and c
}

TEST_CASE("bytes moved count a value once per kernel: a pair's input that is its residual too, Mul(c, c)") {
  // x -> 1x1 Conv a -> depthwise 3x3 b -> 1x1 Conv c adding a (a BlazeBlock) -> Mul y = c * c.
  auto graph = std::make_shared<Graph>();
  const ValueId x = graph->add_value("x", planes_8x8(8));
  graph->inputs().push_back(x);
  const ValueId a = add_conv(*graph, "a", x, 8, 8, 1, 1);
  const ValueId b = add_conv(*graph, "b", a, 8, 8, 3, 8);
  const ValueId c = add_conv(*graph, "c", b, 8, 8, 1, 1, a);
  const ValueId y = graph->add_value("y", planes_8x8(8));
  graph->add_node(Node{.op = OpKind::kMul, .name = "y", .inputs = {c, c}, .outputs = {y}});
  graph->outputs().push_back(y);
  const size_t bytes = 8 * 8 * 8 * sizeof(float);

  const TensorDesc input = planes_8x8(8);
  PlanOptions options{.in_place = false};
  options.kernel_pair = [](const Node& first, const Node&, std::span<const TensorDesc>) { return first.name == "b"; };
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1), options);
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  REQUIRE(plan->kernel_pairs == 1);
  // a: x in, a out; the pair (b, c): a once (taps and residual), c out; y: c once, y out.
  CHECK(plan->activation_bytes_moved == 6 * bytes);

  // Unpaired, b and c are two kernels: c reads b and a.
  options.kernel_pair = [](const Node&, const Node&, std::span<const TensorDesc>) { return false; };
  plan = plan_memory(*graph, std::span(&input, 1), options);
  REQUIRE(plan.is_ok());
  CHECK(plan->activation_bytes_moved == 9 * bytes);
}

TEST_CASE("no kernel pair where the value between is read twice, is a graph output or is taken in place") {
  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  PlanOptions options{.in_place = false};
  options.kernel_pair = [](const Node&, const Node&, std::span<const TensorDesc>) { return true; };
  // x -> Relu a -> Add(a, a) y: a has two readers.
  auto graph = std::make_shared<Graph>();
  const ValueId x = graph->add_value("x", input), a = graph->add_value("a", input), y = graph->add_value("y", input);
  graph->inputs().push_back(x);
  graph->add_node(Node{.op = OpKind::kRelu, .name = "relu", .inputs = {x}, .outputs = {a}});
  graph->add_node(Node{.op = OpKind::kAdd, .name = "add", .inputs = {a, a}, .outputs = {y}});
  graph->outputs().push_back(y);
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1), options);
  REQUIRE(plan.is_ok());
  CHECK(plan->kernel_pairs == 0);
  // The chain with a kept as an output too, then in place.
  auto chain = relu_chain();
  chain->outputs().push_back(*chain->find_value("a"));
  plan = plan_memory(*chain, std::span(&input, 1), options);
  REQUIRE(plan.is_ok());
  CHECK(plan->paired_with == std::vector<NodeId>{-1, 2, -1, -1});  // not (0, 1): a is an output
  options.in_place = true;
  plan = plan_memory(*relu_chain(), std::span(&input, 1), options);
  REQUIRE(plan.is_ok());
  CHECK(plan->kernel_pairs == 0);  // each value takes its input's bytes
}

TEST_CASE("in place, a chain of pointwise ops needs one buffer: each output takes its dying input's bytes") {
  const auto graph = relu_chain();
  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1));
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  const Status valid = verify_memory_plan(*graph, *plan);
  REQUIRE_MESSAGE(valid.is_ok(), valid.to_string());
  const auto id = [&](const char* name) { return static_cast<size_t>(*graph->find_value(name)); };
  CHECK(plan->in_place_of[id("a")] == kNoValue);  // x is a graph input: never overwritten
  CHECK(plan->in_place_of[id("b")] == static_cast<ValueId>(id("a")));
  CHECK(plan->in_place_of[id("c")] == static_cast<ValueId>(id("b")));
  CHECK(plan->in_place_of[id("y")] == kNoValue);  // graph output
  CHECK(plan->offset[id("b")] == plan->offset[id("a")]);
  CHECK(plan->offset[id("c")] == plan->offset[id("a")]);
  CHECK(plan->arena_bytes == kBuffer);
  CHECK(plan->peak_live_bytes == kBuffer);
  CHECK(plan->unplanned_bytes == 3 * kBuffer);
}

TEST_CASE("an input read after the node, or of another description, is not overwritten in place") {
  auto graph = std::make_shared<Graph>();
  const TensorDesc desc{DType::kF32, {1, 4, 4, 8}};
  const ValueId x = graph->add_value("x", desc);
  const ValueId a = graph->add_value("a", desc);
  const ValueId b = graph->add_value("b", desc);
  const ValueId bias = graph->add_initializer("bias", Tensor::from_vector<float>({4, 1, 1}, {1, 2, 3, 4}));
  const ValueId c = graph->add_value("c", desc);
  const ValueId y = graph->add_value("y", desc);
  graph->inputs().push_back(x);
  graph->add_node(Node{.op = OpKind::kRelu, .name = "relu", .inputs = {x}, .outputs = {a}});
  graph->add_node(Node{.op = OpKind::kSigmoid, .name = "sigmoid", .inputs = {a}, .outputs = {b}});  // a read later
  graph->add_node(Node{.op = OpKind::kAdd, .name = "add", .inputs = {bias, b}, .outputs = {c}});    // b dies here
  graph->add_node(Node{.op = OpKind::kMul, .name = "mul", .inputs = {a, c}, .outputs = {y}});
  graph->outputs().push_back(y);
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&desc, 1));
  REQUIRE(plan.is_ok());
  REQUIRE(verify_memory_plan(*graph, *plan).is_ok());
  CHECK(plan->in_place_of[static_cast<size_t>(b)] == kNoValue);
  CHECK(plan->in_place_of[static_cast<size_t>(c)] == b);  // input 1: the broadcast bias is input 0
  CHECK(plan->offset[static_cast<size_t>(c)] == plan->offset[static_cast<size_t>(b)]);
  CHECK(plan->offset[static_cast<size_t>(a)] != plan->offset[static_cast<size_t>(b)]);
}

TEST_CASE("Shape -> Reshape chains are folded at plan time; run-time shape operands make planning unsupported") {
  auto graph = std::make_shared<Graph>();
  const TensorDesc desc{DType::kF32, {2, 3}};
  const ValueId x = graph->add_value("x", desc);
  const ValueId dims = graph->add_value("dims", TensorDesc{DType::kI64, {2}});
  const ValueId r = graph->add_value("r", desc);
  const ValueId y = graph->add_value("y", desc);
  graph->inputs().push_back(x);
  graph->add_node(Node{.op = OpKind::kShape, .name = "shape", .inputs = {x}, .outputs = {dims}});
  graph->add_node(Node{.op = OpKind::kReshape, .name = "reshape", .inputs = {x, dims}, .outputs = {r}});
  graph->add_node(Node{.op = OpKind::kRelu, .name = "relu", .inputs = {r}, .outputs = {y}});
  graph->outputs().push_back(y);
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&desc, 1));
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  CHECK(plan->node_folded == std::vector<bool>{true, false, false});
  REQUIRE(plan->known[static_cast<size_t>(dims)].has_data());
  CHECK(plan->known[static_cast<size_t>(dims)].to_int64_vector() == std::vector<int64_t>{2, 3});
  CHECK(plan->offset[static_cast<size_t>(dims)] == -1);
  CHECK(plan->offset[static_cast<size_t>(r)] == 0);
  // Reshape reads x (24 bytes) and writes r; Relu reads r and writes y; the folded dims are not counted.
  CHECK(plan->activation_bytes_moved == 4 * 24);

  // The same Reshape with its shape operand fed from outside has no static plan.
  auto runtime_shape = std::make_shared<Graph>();
  const ValueId x2 = runtime_shape->add_value("x", desc);
  const ValueId dims2 = runtime_shape->add_value("dims", TensorDesc{DType::kI64, {2}});
  const ValueId y2 = runtime_shape->add_value("y", desc);
  runtime_shape->inputs() = {x2, dims2};
  runtime_shape->add_node(Node{.op = OpKind::kReshape, .name = "reshape", .inputs = {x2, dims2}, .outputs = {y2}});
  runtime_shape->outputs().push_back(y2);
  const TensorDesc descs[] = {desc, TensorDesc{DType::kI64, {2}}};
  Result<MemoryPlan> unsupported = plan_memory(*runtime_shape, descs);
  REQUIRE_FALSE(unsupported.is_ok());
  CHECK(unsupported.status().code() == StatusCode::kUnsupported);
  CHECK(unsupported.status().message().find("reshape") != std::string::npos);
}

TEST_CASE("plans of random graphs are valid: in the arena, aligned, no live overlap, arena >= peak live") {
  std::mt19937 rng(1234);
  int concats_aliased = 0;
  int nodes_folded = 0;
  int in_place = 0;
  int piece_views = 0;
  for (int trial = 0; trial < 120; ++trial) {
    CAPTURE(trial);
    const auto graph = make_random_graph(rng, 3 + trial % 25, /*dynamic_batch=*/false);
    REQUIRE(graph->verify().is_ok());
    const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
    // Half the trials with the CPU executor's views of graph outputs and of slices.
    const bool views = trial % 2 == 1;
    Result<MemoryPlan> plan =
        plan_memory(*graph, std::span(&input, 1), PlanOptions{.output_views = views, .piece_views = views});
    REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
    const Status valid = verify_memory_plan(*graph, *plan);
    REQUIRE_MESSAGE(valid.is_ok(), valid.to_string());
    CHECK(plan->arena_bytes >= plan->peak_live_bytes);
    // One buffer per tensor: every value a node produces at run time that is not a graph output.
    size_t intermediate_bytes = 0;
    for (size_t n = 0; n < graph->nodes().size(); ++n) {
      if (plan->node_folded[n]) continue;
      for (ValueId output : graph->nodes()[n].outputs) {
        bool is_output = false;
        for (ValueId graph_output : graph->outputs()) is_output = is_output || graph_output == output;
        // Values written straight into a graph output's storage are not in the arena either.
        const bool into_output = plan->written_into_output[static_cast<size_t>(output)] != kNoValue;
        if (!is_output && !into_output) intermediate_bytes += plan->descs[static_cast<size_t>(output)].nbytes();
      }
    }
    CHECK(plan->unplanned_bytes == intermediate_bytes);
    CHECK(plan->arena_bytes <= aligned(plan->unplanned_bytes) + 64 * graph->values().size());
    concats_aliased += plan->concats_aliased;
    in_place += static_cast<int>(
        std::count_if(plan->in_place_of.begin(), plan->in_place_of.end(), [](ValueId v) { return v != kNoValue; }));
    nodes_folded += static_cast<int>(std::count(plan->node_folded.begin(), plan->node_folded.end(), true));
    piece_views += plan->piece_views;
  }
  // The property covered the interesting cases.
  CHECK(piece_views > 5);
  CHECK(concats_aliased > 5);
  CHECK(nodes_folded > 5);
  CHECK(in_place > 5);
}

TEST_CASE("verify_memory_plan catches values that are alive together and share bytes") {
  const auto graph = relu_chain();
  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1), PlanOptions{.in_place = false});
  REQUIRE(plan.is_ok());
  const auto a = static_cast<size_t>(*graph->find_value("a"));
  const auto b = static_cast<size_t>(*graph->find_value("b"));
  plan->offset[b] = plan->offset[a];
  CHECK_FALSE(verify_memory_plan(*graph, *plan).is_ok());
  plan->offset[b] = static_cast<int64_t>(plan->arena_bytes);  // past the end
  CHECK_FALSE(verify_memory_plan(*graph, *plan).is_ok());
}

TEST_CASE("plan_memory rejects a wrong number of input descriptions") {
  const auto graph = relu_chain();
  CHECK(plan_memory(*graph, {}).status().code() == StatusCode::kInvalidArgument);
}

namespace {

// x -> Relu a, Sigmoid b -> Concat(a, b) on `axis` -> c -> Relu y.
std::shared_ptr<Graph> concat_graph(int64_t axis, Shape shape = {1, 4, 4, 8}) {
  auto graph = std::make_shared<Graph>();
  const TensorDesc desc{DType::kF32, std::move(shape)};
  Shape joined = desc.shape;
  joined[static_cast<size_t>(axis)] *= 2;
  const ValueId x = graph->add_value("x", desc);
  const ValueId a = graph->add_value("a", desc);
  const ValueId b = graph->add_value("b", desc);
  const ValueId c = graph->add_value("c", TensorDesc{DType::kF32, joined});
  const ValueId y = graph->add_value("y", TensorDesc{DType::kF32, joined});
  graph->inputs().push_back(x);
  graph->add_node(Node{.op = OpKind::kRelu, .name = "relu", .inputs = {x}, .outputs = {a}});
  graph->add_node(Node{.op = OpKind::kSigmoid, .name = "sigmoid", .inputs = {x}, .outputs = {b}});
  Node concat{.op = OpKind::kConcat, .name = "concat", .inputs = {a, b}, .outputs = {c}};
  concat.attrs.set("axis", axis);
  graph->add_node(std::move(concat));
  graph->add_node(Node{.op = OpKind::kRelu, .name = "relu_out", .inputs = {c}, .outputs = {y}});
  graph->outputs().push_back(y);
  return graph;
}

}  // namespace

TEST_CASE("Concat inputs are written in place into the Concat output when each is one contiguous block") {
  const auto graph = concat_graph(1);
  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1));
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  const Status valid = verify_memory_plan(*graph, *plan);
  REQUIRE_MESSAGE(valid.is_ok(), valid.to_string());
  const auto id = [&](const char* name) { return static_cast<size_t>(*graph->find_value(name)); };
  CHECK(plan->concats_aliased == 1);
  CHECK(plan->node_skipped == std::vector<bool>{false, false, true, false});
  CHECK(plan->alias_of[id("a")] == static_cast<ValueId>(id("c")));
  CHECK(plan->offset[id("a")] == plan->offset[id("c")]);
  CHECK(plan->offset[id("b")] == plan->offset[id("c")] + static_cast<int64_t>(kBuffer));
  CHECK(plan->first_node[id("c")] == 0);  // from a's producer
  CHECK(plan->arena_bytes == 2 * kBuffer);
  CHECK(plan->unplanned_bytes == 4 * kBuffer);  // a, b and c, one buffer each
  // relu: 1 + 1 buffers, sigmoid: 1 + 1, concat: skipped, relu_out: 2 + 2.
  CHECK(plan->activation_bytes_moved == 8 * kBuffer);
}

TEST_CASE("blocks of odd sizes alias only where the backend takes any element offset (the GPU's)") {
  const auto graph = concat_graph(1, {1, 1, 3, 3});  // 36-byte blocks: b would start 36 bytes in
  const TensorDesc input{DType::kF32, {1, 1, 3, 3}};
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1));
  REQUIRE(plan.is_ok());
  REQUIRE(verify_memory_plan(*graph, *plan).is_ok());
  CHECK(plan->concats_aliased == 0);

  plan = plan_memory(*graph, std::span(&input, 1), PlanOptions{.concat_blocks_element_aligned = true});
  REQUIRE(plan.is_ok());
  const Status valid = verify_memory_plan(*graph, *plan);
  REQUIRE_MESSAGE(valid.is_ok(), valid.to_string());
  const auto id = [&](const char* name) { return static_cast<size_t>(*graph->find_value(name)); };
  CHECK(plan->concats_aliased == 1);
  CHECK(plan->offset[id("a")] == plan->offset[id("c")]);
  CHECK(plan->offset[id("b")] == plan->offset[id("c")] + 36);
  // Where the plan promised 64-byte blocks, the same offset is a fault.
  MemoryPlan strict = *plan;
  strict.concat_blocks_element_aligned = false;
  CHECK_FALSE(verify_memory_plan(*graph, strict).is_ok());
}

TEST_CASE("Concat inputs are not aliased where they would be strided blocks of the output") {
  const auto graph = concat_graph(2);  // dims before the axis multiply to 4: each input is 4 blocks
  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1));
  REQUIRE(plan.is_ok());
  REQUIRE(verify_memory_plan(*graph, *plan).is_ok());
  CHECK(plan->concats_aliased == 0);
  CHECK(plan->node_skipped == std::vector<bool>{false, false, false, false});
  CHECK(plan->arena_bytes == 4 * kBuffer);  // a and b (alive together), then c
}

namespace {

// x -> Relu a -> Reshape r ([1, 128]) -> Sigmoid y; with `reread`, a is also read by a Relu after
// the Reshape (z, a second output), so it does not die at the Reshape.
std::shared_ptr<Graph> reshape_graph(bool reread) {
  auto graph = std::make_shared<Graph>();
  const TensorDesc desc{DType::kF32, {1, 4, 4, 8}};
  const TensorDesc flat{DType::kF32, {1, 128}};
  const ValueId x = graph->add_value("x", desc);
  const ValueId a = graph->add_value("a", desc);
  const ValueId dims = graph->add_initializer("dims", Tensor::from_vector<int64_t>({2}, {1, 128}));
  const ValueId r = graph->add_value("r", flat);
  const ValueId y = graph->add_value("y", flat);
  graph->inputs().push_back(x);
  graph->add_node(Node{.op = OpKind::kRelu, .name = "relu", .inputs = {x}, .outputs = {a}});
  graph->add_node(Node{.op = OpKind::kReshape, .name = "reshape", .inputs = {a, dims}, .outputs = {r}});
  graph->add_node(Node{.op = OpKind::kSigmoid, .name = "sigmoid", .inputs = {r}, .outputs = {y}});
  graph->outputs().push_back(y);
  if (reread) {
    const ValueId z = graph->add_value("z", desc);
    graph->add_node(Node{.op = OpKind::kRelu, .name = "relu_again", .inputs = {a}, .outputs = {z}});
    graph->outputs().push_back(z);
  }
  return graph;
}

// The graph run with the planned arena against the same graph with one buffer per tensor.
void check_planned_run_matches(const std::shared_ptr<Graph>& graph, const Tensor& input) {
  std::vector<std::vector<Tensor>> results;
  for (bool planned : {true, false}) {
    ExecutorOptions options;
    options.plan_memory = planned;
    options.poison_arena = true;
    Result<Executor> executor = Executor::create(graph, options);
    REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
    Result<std::vector<Tensor>> outputs = executor->run(std::span(&input, 1));
    REQUIRE_MESSAGE(outputs.is_ok(), outputs.status().to_string());
    results.push_back(std::move(outputs).value());
  }
  REQUIRE(results[0].size() == results[1].size());
  for (size_t i = 0; i < results[0].size(); ++i) {
    REQUIRE(results[0][i].shape() == results[1][i].shape());
    for (int64_t e = 0; e < results[0][i].numel(); ++e) {
      CHECK(results[0][i].data<float>()[e] == results[1][i].data<float>()[e]);
    }
  }
}

Tensor ramp(const Shape& shape) {
  Tensor t = Tensor::empty(DType::kF32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i % 23) - 11.0f;
  return t;
}

}  // namespace

TEST_CASE("a Reshape whose input dies there is a view of it: skipped, same bytes, same results") {
  const auto graph = reshape_graph(false);
  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1));
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  REQUIRE(verify_memory_plan(*graph, *plan).is_ok());
  const auto id = [&](const char* name) { return static_cast<size_t>(*graph->find_value(name)); };
  CHECK(plan->views == 1);
  CHECK(plan->node_skipped == std::vector<bool>{false, true, false});
  CHECK(plan->in_place_of[id("r")] == static_cast<ValueId>(id("a")));
  CHECK(plan->offset[id("r")] == plan->offset[id("a")]);
  // relu: 1 + 1 buffers, reshape: nothing, sigmoid: 1 + 1.
  CHECK(plan->activation_bytes_moved == 4 * kBuffer);
  check_planned_run_matches(graph, ramp({1, 4, 4, 8}));

  // Without in-place planning (the unfused accounting) the Reshape copies.
  Result<MemoryPlan> copying = plan_memory(*graph, std::span(&input, 1), PlanOptions{.in_place = false});
  REQUIRE(copying.is_ok());
  CHECK(copying->views == 0);
  CHECK(copying->activation_bytes_moved == 6 * kBuffer);
}

TEST_CASE("a Reshape whose input is read again later copies it") {
  const auto graph = reshape_graph(true);
  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1));
  REQUIRE(plan.is_ok());
  REQUIRE(verify_memory_plan(*graph, *plan).is_ok());
  CHECK(plan->views == 0);
  CHECK(plan->node_skipped == std::vector<bool>{false, false, false, false});
  check_planned_run_matches(graph, ramp({1, 4, 4, 8}));
}

TEST_CASE("a Reshape of an aliased Concat output is a view of it, blocks included") {
  // x -> Relu a, Sigmoid b -> Concat(a, b) on axis 1 -> c -> Reshape r -> Relu y (YOLOX's head).
  auto graph = std::make_shared<Graph>();
  const TensorDesc desc{DType::kF32, {1, 4, 4, 8}};
  const TensorDesc joined{DType::kF32, {1, 8, 4, 8}};
  const TensorDesc flat{DType::kF32, {1, 8, 32}};
  const ValueId x = graph->add_value("x", desc);
  const ValueId a = graph->add_value("a", desc);
  const ValueId b = graph->add_value("b", desc);
  const ValueId c = graph->add_value("c", joined);
  const ValueId dims = graph->add_initializer("dims", Tensor::from_vector<int64_t>({3}, {1, 8, 32}));
  const ValueId r = graph->add_value("r", flat);
  const ValueId y = graph->add_value("y", flat);
  graph->inputs().push_back(x);
  graph->add_node(Node{.op = OpKind::kRelu, .name = "relu", .inputs = {x}, .outputs = {a}});
  graph->add_node(Node{.op = OpKind::kSigmoid, .name = "sigmoid", .inputs = {x}, .outputs = {b}});
  Node concat{.op = OpKind::kConcat, .name = "concat", .inputs = {a, b}, .outputs = {c}};
  concat.attrs.set("axis", int64_t{1});
  graph->add_node(std::move(concat));
  graph->add_node(Node{.op = OpKind::kReshape, .name = "reshape", .inputs = {c, dims}, .outputs = {r}});
  graph->add_node(Node{.op = OpKind::kRelu, .name = "relu_out", .inputs = {r}, .outputs = {y}});
  graph->outputs().push_back(y);
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&desc, 1));
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  const Status valid = verify_memory_plan(*graph, *plan);
  REQUIRE_MESSAGE(valid.is_ok(), valid.to_string());
  CHECK(plan->concats_aliased == 1);
  CHECK(plan->views == 1);
  CHECK(plan->node_skipped == std::vector<bool>{false, false, true, true, false});
  CHECK(plan->offset[static_cast<size_t>(r)] == plan->offset[static_cast<size_t>(c)]);
  CHECK(plan->offset[static_cast<size_t>(a)] == plan->offset[static_cast<size_t>(c)]);
  check_planned_run_matches(graph, ramp({1, 4, 4, 8}));
}

TEST_CASE("verify_memory_plan catches an aliased block outside its Concat output") {
  const auto graph = concat_graph(1);
  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  Result<MemoryPlan> plan = plan_memory(*graph, std::span(&input, 1));
  REQUIRE(plan.is_ok());
  plan->offset[static_cast<size_t>(*graph->find_value("b"))] += static_cast<int64_t>(kBuffer);
  CHECK_FALSE(verify_memory_plan(*graph, *plan).is_ok());
}

namespace {

// plan_memory for one input description, required to succeed and to pass verify_memory_plan.
MemoryPlan verified_plan(const Graph& graph, const TensorDesc& input, const PlanOptions& options = {}) {
  Result<MemoryPlan> plan = plan_memory(graph, std::span(&input, 1), options);
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  const Status valid = verify_memory_plan(graph, *plan);
  REQUIRE_MESSAGE(valid.is_ok(), valid.to_string());
  return std::move(plan).value();
}

// x -> Relu a -> Sigmoid s -> Reshape r, x -> Tanh b -> Reshape q; Concat(r, q) on axis 1 is the
// graph output c. With `r_read_after`, Exp(r) is a second graph output after the Concat.
std::shared_ptr<Graph> concat_output_graph(bool r_read_after) {
  auto graph = std::make_shared<Graph>();
  const TensorDesc desc{DType::kF32, {1, 4, 4, 8}};
  const TensorDesc flat{DType::kF32, {1, 16, 8}};
  const ValueId x = graph->add_value("x", desc);
  const ValueId dims = graph->add_initializer("dims", Tensor::from_vector<int64_t>({3}, {1, 16, 8}));
  graph->inputs().push_back(x);
  const auto node = [&](OpKind op, const char* name, std::vector<ValueId> inputs, const TensorDesc& out) {
    const ValueId v = graph->add_value(name, out);
    graph->add_node(Node{.op = op, .name = name, .inputs = std::move(inputs), .outputs = {v}});
    return v;
  };
  const ValueId a = node(OpKind::kRelu, "a", {x}, desc);
  const ValueId s = node(OpKind::kSigmoid, "s", {a}, desc);
  const ValueId r = node(OpKind::kReshape, "r", {s, dims}, flat);
  const ValueId b = node(OpKind::kTanh, "b", {x}, desc);
  const ValueId q = node(OpKind::kReshape, "q", {b, dims}, flat);
  const ValueId c = graph->add_value("c", TensorDesc{DType::kF32, {1, 32, 8}});
  Node concat{.op = OpKind::kConcat, .name = "concat", .inputs = {r, q}, .outputs = {c}};
  concat.attrs.set("axis", int64_t{1});
  graph->add_node(std::move(concat));
  graph->outputs().push_back(c);
  if (r_read_after) graph->outputs().push_back(node(OpKind::kExp, "e", {r}, flat));
  return graph;
}

}  // namespace

TEST_CASE("a Concat that is a graph output has its inputs, and what shares their bytes, written into it") {
  const auto graph = concat_output_graph(false);
  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  const MemoryPlan plan = verified_plan(*graph, input, PlanOptions{.output_views = true});
  const auto id = [&](const char* name) { return static_cast<size_t>(*graph->find_value(name)); };
  const auto c = static_cast<ValueId>(id("c"));
  CHECK(plan.concats_into_outputs == 1);
  // a, the Sigmoid in its bytes and the Reshape viewing them are the first block; b and q the second.
  for (const char* name : {"a", "s", "r", "b", "q"}) {
    CAPTURE(name);
    CHECK(plan.written_into_output[id(name)] == c);
    CHECK(!plan.in_arena(static_cast<ValueId>(id(name))));
  }
  CHECK(plan.output_offset[id("a")] == 0);
  CHECK(plan.output_offset[id("r")] == 0);
  CHECK(plan.output_offset[id("b")] == static_cast<int64_t>(kBuffer));
  CHECK(plan.arena_bytes == 0);
  CHECK(plan.node_skipped == std::vector<bool>{false, false, true, false, true, true});
  // Relu, Sigmoid (in place) and Tanh: 2 buffers each; nothing copied into the output.
  CHECK(plan.activation_bytes_moved == 6 * kBuffer);
  check_planned_run_matches(graph, ramp({1, 4, 4, 8}));

  // Without output views (the CUDA executor's plans) the Concat copies.
  const MemoryPlan copying = verified_plan(*graph, input);
  CHECK(copying.concats_into_outputs == 0);
  CHECK(copying.activation_bytes_moved == 10 * kBuffer);
}

TEST_CASE("a Concat output's block is not written where a value sharing its bytes is read after the Concat") {
  // r is a view of s, which took a's bytes: Exp reads r after the Concat, so a, s and r stay.
  const auto graph = concat_output_graph(true);
  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  const MemoryPlan plan = verified_plan(*graph, input, PlanOptions{.output_views = true});
  CHECK(plan.concats_into_outputs == 0);
  CHECK(!plan.node_skipped[5]);
  check_planned_run_matches(graph, ramp({1, 4, 4, 8}));
}

namespace {

ValueId int_constant(Graph& graph, const std::string& name, const std::vector<int64_t>& values) {
  return graph.add_initializer(name, Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())}, values));
}

ValueId add_node(Graph& graph, OpKind op, const std::string& name, std::vector<ValueId> inputs, Shape shape,
                 Attributes attrs = {}) {
  const ValueId out = graph.add_value(name, TensorDesc{DType::kF32, std::move(shape)});
  graph.add_node(
      Node{.op = op, .name = name, .inputs = std::move(inputs), .outputs = {out}, .attrs = std::move(attrs)});
  return out;
}

Attributes axis_1() {
  Attributes a;
  a.set("axis", int64_t{1});
  return a;
}

constexpr int64_t kChannelBytes = 4 * 8 * sizeof(float);  // one [4, 8] channel plane

}  // namespace

TEST_CASE("the outputs of a Split and of a Slice on channels are views of their input: skipped, no copies") {
  // x -> Relu a -> Split [1, 3] -> s0, s1; Sigmoid(s0) -> y0; Tanh(s1) -> t -> Slice 1:3 -> u -> Relu y1.
  auto graph = std::make_shared<Graph>();
  const ValueId x = graph->add_value("x", TensorDesc{DType::kF32, {1, 4, 4, 8}});
  graph->inputs().push_back(x);
  const ValueId a = add_node(*graph, OpKind::kRelu, "a", {x}, {1, 4, 4, 8});
  const ValueId s0 = graph->add_value("s0", TensorDesc{DType::kF32, {1, 1, 4, 8}});
  const ValueId s1 = graph->add_value("s1", TensorDesc{DType::kF32, {1, 3, 4, 8}});
  graph->add_node(Node{.op = OpKind::kSplit,
                       .name = "split",
                       .inputs = {a, int_constant(*graph, "sizes", {1, 3})},
                       .outputs = {s0, s1},
                       .attrs = axis_1()});
  graph->outputs().push_back(add_node(*graph, OpKind::kSigmoid, "y0", {s0}, {1, 1, 4, 8}));
  const ValueId t = add_node(*graph, OpKind::kTanh, "t", {s1}, {1, 3, 4, 8});
  const ValueId u = add_node(
      *graph, OpKind::kSlice, "u",
      {t, int_constant(*graph, "starts", {1}), int_constant(*graph, "ends", {3}), int_constant(*graph, "axes", {1})},
      {1, 2, 4, 8});
  graph->outputs().push_back(add_node(*graph, OpKind::kRelu, "y1", {u}, {1, 2, 4, 8}));

  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  const MemoryPlan plan = verified_plan(*graph, input, PlanOptions{.piece_views = true});
  const auto at = [&](ValueId v) { return plan.offset[static_cast<size_t>(v)]; };
  CHECK(plan.piece_views == 2);
  CHECK(plan.node_skipped == std::vector<bool>{false, true, false, false, true, false});
  CHECK(plan.alias_of[static_cast<size_t>(s0)] == a);
  CHECK(plan.alias_of[static_cast<size_t>(s1)] == a);
  CHECK(at(s0) == at(a));
  CHECK(at(s1) == at(a) + kChannelBytes);
  CHECK(plan.alias_of[static_cast<size_t>(u)] == t);
  CHECK(at(u) == at(t) + kChannelBytes);
  CHECK(plan.read_only_view[static_cast<size_t>(u)]);
  // A view is never overwritten in place: Tanh writes bytes of its own, and a lives while s1 does.
  CHECK(plan.in_place_of[static_cast<size_t>(t)] == kNoValue);
  CHECK(plan.last_node[static_cast<size_t>(a)] == 3);
  // Only Relu (4 channels in, 4 out), Sigmoid (1, 1), Tanh (3, 3) and Relu (2, 2) move bytes.
  CHECK(plan.activation_bytes_moved == static_cast<size_t>((8 + 2 + 6 + 4) * kChannelBytes));
  check_planned_run_matches(graph, ramp({1, 4, 4, 8}));

  const MemoryPlan copying = verified_plan(*graph, input);
  CHECK(copying.piece_views == 0);
}

TEST_CASE("a piece of a Concat's block, and a Reshape of it, are views nested in the Concat's output") {
  // x -> Relu a, Sigmoid b -> Concat(a, b) c -> Relu y; Slice(a, 2:4) u -> Reshape r -> Exp z.
  auto graph = std::make_shared<Graph>();
  const ValueId x = graph->add_value("x", TensorDesc{DType::kF32, {1, 4, 4, 8}});
  graph->inputs().push_back(x);
  const ValueId a = add_node(*graph, OpKind::kRelu, "a", {x}, {1, 4, 4, 8});
  const ValueId b = add_node(*graph, OpKind::kSigmoid, "b", {x}, {1, 4, 4, 8});
  const ValueId c = add_node(*graph, OpKind::kConcat, "c", {a, b}, {1, 8, 4, 8}, axis_1());
  const ValueId u = add_node(
      *graph, OpKind::kSlice, "u",
      {a, int_constant(*graph, "starts", {2}), int_constant(*graph, "ends", {4}), int_constant(*graph, "axes", {1})},
      {1, 2, 4, 8});
  const ValueId r = add_node(*graph, OpKind::kReshape, "r", {u, int_constant(*graph, "dims", {1, 64})}, {1, 64});
  graph->outputs().push_back(add_node(*graph, OpKind::kRelu, "y", {c}, {1, 8, 4, 8}));
  graph->outputs().push_back(add_node(*graph, OpKind::kExp, "z", {r}, {1, 64}));

  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  const MemoryPlan plan = verified_plan(*graph, input, PlanOptions{.piece_views = true});
  const auto at = [&](ValueId v) { return plan.offset[static_cast<size_t>(v)]; };
  CHECK(plan.concats_aliased == 1);
  CHECK(plan.piece_views == 1);
  CHECK(plan.views == 1);
  CHECK(plan.alias_of[static_cast<size_t>(a)] == c);
  CHECK(plan.alias_of[static_cast<size_t>(u)] == a);
  CHECK(plan.alias_of[static_cast<size_t>(r)] == a);  // where u lies, not in u
  CHECK(at(u) == at(c) + 2 * kChannelBytes);
  CHECK(at(r) == at(u));
  // The Concat's output lives until the Exp has read r.
  CHECK(plan.last_node[static_cast<size_t>(c)] == 6);
  check_planned_run_matches(graph, ramp({1, 4, 4, 8}));
}

TEST_CASE("pieces that are not one contiguous, aligned run of their input are copied") {
  const TensorDesc input{DType::kF32, {1, 4, 4, 8}};
  const auto pieces_viewed = [&](int64_t axis, int64_t step, Shape out, const PlanOptions& options) {
    auto graph = std::make_shared<Graph>();
    const ValueId x = graph->add_value("x", input);
    graph->inputs().push_back(x);
    const ValueId a = add_node(*graph, OpKind::kRelu, "a", {x}, input.shape);
    const ValueId u = add_node(*graph, OpKind::kSlice, "u",
                               {a, int_constant(*graph, "starts", {1}), int_constant(*graph, "ends", {4}),
                                int_constant(*graph, "axes", {axis}), int_constant(*graph, "steps", {step})},
                               std::move(out));
    graph->outputs().push_back(add_node(*graph, OpKind::kExp, "y", {u}, graph->value(u).desc.shape));
    const MemoryPlan plan = verified_plan(*graph, input, options);
    check_planned_run_matches(graph, ramp(input.shape));
    return plan.piece_views;
  };
  const PlanOptions views{.piece_views = true};
  CHECK(pieces_viewed(1, 1, {1, 3, 4, 8}, views) == 1);  // channels 1:4: one run
  CHECK(pieces_viewed(2, 1, {1, 4, 3, 8}, views) == 0);  // rows 1:4: a run per channel
  CHECK(pieces_viewed(1, 2, {1, 2, 4, 8}, views) == 0);  // every other channel
  CHECK(pieces_viewed(3, 1, {1, 4, 4, 3}, views) == 0);  // columns
}
