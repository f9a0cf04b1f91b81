#include "runtime/executor.h"

#include <doctest/doctest.h>

#include <random>

#include "tests/runtime/executor_helpers.h"
#include "tests/runtime/random_graph.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

TEST_CASE("the planned executor gives bit-identical outputs to the dynamic one, with a poisoned arena") {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    const auto graph = make_random_graph(rng, 4 + trial % 20, /*dynamic_batch=*/false);
    const Tensor x = random_tensor(DType::kF32, {1, 4, 4, 8}, rng);
    Executor planned = make_executor(graph, {.threads = 2, .poison_arena = true});
    Executor dynamic = make_executor(graph, {.threads = 2, .plan_memory = false});
    const std::vector<Tensor> expected = run_ok(dynamic, std::span(&x, 1));
    CHECK(dynamic.memory_plan() == nullptr);
    for (int run = 0; run < 2; ++run) {  // the second run finds the arena holding the first run's values
      const std::vector<Tensor> actual = run_ok(planned, std::span(&x, 1));
      REQUIRE(planned.memory_plan() != nullptr);
      REQUIRE(actual.size() == expected.size());
      for (size_t i = 0; i < actual.size(); ++i) CHECK(bit_identical(actual[i], expected[i]));
    }
  }
}

TEST_CASE("plans are cached per input shape: a new batch size plans once, then reuses") {
  std::mt19937 rng(7);
  const auto graph = make_random_graph(rng, 12, /*dynamic_batch=*/true);
  Executor planned = make_executor(graph, {.threads = 1, .poison_arena = true});
  Executor dynamic = make_executor(graph, {.threads = 1, .plan_memory = false});
  const auto check_batch = [&](int64_t batch, int expected_plans) {
    CAPTURE(batch);
    const Tensor x = random_tensor(DType::kF32, {batch, 4, 4, 8}, rng);
    const std::vector<Tensor> actual = run_ok(planned, std::span(&x, 1));
    const std::vector<Tensor> expected = run_ok(dynamic, std::span(&x, 1));
    CHECK(planned.plans_built() == expected_plans);
    REQUIRE(planned.memory_plan() != nullptr);
    CHECK(planned.memory_plan()->descs[static_cast<size_t>(graph->inputs()[0])].shape[0] == batch);
    for (size_t i = 0; i < actual.size(); ++i) CHECK(bit_identical(actual[i], expected[i]));
  };
  check_batch(1, 1);
  check_batch(1, 1);
  check_batch(3, 2);
  check_batch(3, 2);
  check_batch(1, 2);
  CHECK(dynamic.plans_built() == 0);
}

TEST_CASE("outputs returned to the caller survive later runs") {
  std::mt19937 rng(11);
  const auto graph = make_random_graph(rng, 10, /*dynamic_batch=*/false);
  Executor executor = make_executor(graph, {.threads = 1});
  const Tensor x1 = random_tensor(DType::kF32, {1, 4, 4, 8}, rng);
  const Tensor x2 = random_tensor(DType::kF32, {1, 4, 4, 8}, rng);
  const std::vector<Tensor> first = run_ok(executor, std::span(&x1, 1));
  std::vector<Tensor> first_copy;
  for (const Tensor& t : first) first_copy.push_back(t.clone());
  run_ok(executor, std::span(&x2, 1));
  for (size_t i = 0; i < first.size(); ++i) CHECK(bit_identical(first[i], first_copy[i]));
}

TEST_CASE("an output the caller let go of is written in place next run; a kept one is not touched") {
  std::mt19937 rng(12);
  const auto graph = make_random_graph(rng, 10, /*dynamic_batch=*/false);
  Executor executor = make_executor(graph, {.threads = 1});
  Executor dynamic = make_executor(graph, {.threads = 1, .plan_memory = false});
  const Tensor x1 = random_tensor(DType::kF32, {1, 4, 4, 8}, rng);
  const Tensor x2 = random_tensor(DType::kF32, {1, 4, 4, 8}, rng);
  std::vector<const void*> first_storage;
  for (const Tensor& t : run_ok(executor, std::span(&x1, 1))) first_storage.push_back(t.raw_data());
  // Released: the second run writes the same storage, and all of it.
  const std::vector<Tensor> second = run_ok(executor, std::span(&x2, 1));
  const std::vector<Tensor> expected = run_ok(dynamic, std::span(&x2, 1));
  for (size_t i = 0; i < second.size(); ++i) {
    CHECK(second[i].raw_data() == first_storage[i]);
    CHECK(bit_identical(second[i], expected[i]));
  }
  // Kept: the third run gets new storage.
  const std::vector<Tensor> third = run_ok(executor, std::span(&x1, 1));
  for (size_t i = 0; i < third.size(); ++i) CHECK(third[i].raw_data() != second[i].raw_data());
}

TEST_CASE("a graph without a static plan runs on the dynamic path") {
  auto graph = std::make_shared<Graph>();
  const ValueId x = graph->add_value("x", TensorDesc{DType::kF32, {2, 3}});
  const ValueId dims = graph->add_value("dims", TensorDesc{DType::kI64, {2}});
  const ValueId r = graph->add_value("r", TensorDesc{DType::kF32, {-1, -1}});
  const ValueId y = graph->add_value("y", TensorDesc{DType::kF32, {-1, -1}});
  graph->inputs() = {x, dims};
  graph->add_node(Node{.op = OpKind::kReshape, .name = "reshape", .inputs = {x, dims}, .outputs = {r}});
  graph->add_node(Node{.op = OpKind::kRelu, .name = "relu", .inputs = {r}, .outputs = {y}});
  graph->outputs().push_back(y);
  Executor executor = make_executor(graph, {.threads = 1});
  const Tensor inputs[] = {Tensor::from_vector<float>({2, 3}, {-1, 2, -3, 4, -5, 6}),
                           Tensor::from_vector<int64_t>({2}, {3, 2})};
  const std::vector<Tensor> outputs = run_ok(executor, inputs);
  CHECK(executor.memory_plan() == nullptr);
  CHECK(executor.plans_built() == 1);
  REQUIRE(outputs[0].shape() == Shape{3, 2});
  const std::span<const float> values = outputs[0].values<float>();
  CHECK(std::vector<float>(values.begin(), values.end()) == std::vector<float>{0, 2, 0, 4, 0, 6});
  run_ok(executor, inputs);
  CHECK(executor.plans_built() == 1);  // the failed attempt is cached too
}

TEST_CASE("a planned Resize whose roi is a graph input samples each run's roi, not the first one's") {
  // Constant scales give a static output shape, so the executor plans and caches kernel setups;
  // the taps depend on the roi's values, which the cache's key (shapes) cannot see.
  auto graph = std::make_shared<Graph>();
  const ValueId x = graph->add_value("x", TensorDesc{DType::kF32, {1, 1, 4, 4}});
  const ValueId roi = graph->add_value("roi", TensorDesc{DType::kF32, {8}});
  const ValueId scales = graph->add_initializer("scales", Tensor::from_vector<float>({4}, {1.0f, 1.0f, 0.5f, 0.5f}));
  const ValueId y = graph->add_value("y", TensorDesc{DType::kF32, {1, 1, 2, 2}});
  graph->inputs() = {x, roi};
  Node resize{.op = OpKind::kResize, .name = "resize", .inputs = {x, roi, scales}, .outputs = {y}};
  resize.attrs.set("mode", std::string("linear"));
  resize.attrs.set("coordinate_transformation_mode", std::string("tf_crop_and_resize"));
  graph->add_node(std::move(resize));
  graph->outputs().push_back(y);
  std::vector<float> pixels(16);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<float>(i);
  const Tensor image = Tensor::from_vector<float>({1, 1, 4, 4}, pixels);
  const Tensor whole = Tensor::from_vector<float>({8}, {0, 0, 0, 0, 1, 1, 1, 1});
  const Tensor quarter = Tensor::from_vector<float>({8}, {0, 0, 0, 0, 1, 1, 0.5f, 0.5f});

  Executor executor = make_executor(graph, {.threads = 1});
  const Tensor first_inputs[] = {image, whole};
  const Tensor second_inputs[] = {image, quarter};
  const std::vector<Tensor> first = run_ok(executor, first_inputs);
  const std::vector<Tensor> second = run_ok(executor, second_inputs);
  REQUIRE(executor.memory_plan() != nullptr);
  // Corners of the whole image, then of its top-left quarter (rows and columns 0 to 1.5).
  CHECK(std::vector<float>(first[0].values<float>().begin(), first[0].values<float>().end()) ==
        std::vector<float>{0, 3, 12, 15});
  CHECK(std::vector<float>(second[0].values<float>().begin(), second[0].values<float>().end()) ==
        std::vector<float>{0, 1.5f, 6, 7.5f});
}

namespace {

// x -> depthwise 3x3 -> 1x1 (+ x) -> out, and (second_reader) the depthwise output also as an output;
// large enough (3 x 1.2 MB) for the pair to be worth one kernel.
std::shared_ptr<Graph> separable_block(bool second_reader) {
  std::mt19937 rng(21);
  auto graph = std::make_shared<Graph>();
  const ValueId x = graph->add_value("x", TensorDesc{DType::kF32, {1, 24, 96, 128}});
  graph->inputs().push_back(x);
  const ValueId dw_w = graph->add_initializer("dw_w", random_tensor(DType::kF32, {24, 1, 3, 3}, rng));
  const ValueId pw_w = graph->add_initializer("pw_w", random_tensor(DType::kF32, {24, 24, 1, 1}, rng));
  const ValueId between = graph->add_value("between", TensorDesc{DType::kF32, {1, 24, 96, 128}});
  const ValueId out = graph->add_value("out", TensorDesc{DType::kF32, {1, 24, 96, 128}});
  Node depthwise;
  depthwise.op = OpKind::kConv;
  depthwise.name = "depthwise";
  depthwise.inputs = {x, dw_w};
  depthwise.outputs = {between};
  depthwise.attrs.set("group", int64_t{24});
  depthwise.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  depthwise.attrs.set("fused_activation", std::string("relu"));
  graph->add_node(std::move(depthwise));
  Node pointwise;
  pointwise.op = OpKind::kConv;
  pointwise.name = "pointwise";
  pointwise.inputs = {between, pw_w, kNoValue, x};
  pointwise.outputs = {out};
  pointwise.attrs.set("fused_residual_after_activation", int64_t{0});
  graph->add_node(std::move(pointwise));
  graph->outputs().push_back(out);
  if (second_reader) graph->outputs().push_back(between);
  return graph;
}

}  // namespace

TEST_CASE("a depthwise Conv and the 1x1 Conv reading it run as one kernel, only when nothing else reads it") {
  std::mt19937 rng(22);
  const std::vector<Tensor> inputs = {random_tensor(DType::kF32, {1, 24, 96, 128}, rng)};
  for (const bool second_reader : {false, true}) {
    CAPTURE(second_reader);
    const std::shared_ptr<const Graph> graph = separable_block(second_reader);
    Executor reference = make_executor(graph, ExecutorOptions{.threads = 1, .reference_kernels = true});
    Executor optimised = make_executor(graph, ExecutorOptions{.threads = 2, .profile = true, .poison_arena = true});
    const std::vector<Tensor> want = run_ok(reference, inputs);
    const std::vector<Tensor> got = run_ok(optimised, inputs);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const ErrorStats error = compare_tensors(got[i], want[i]);
      CHECK_MESSAGE(error.relative_l2 <= 1e-5, error.to_string());
    }
    // Paired: the 1x1 Conv's time is the depthwise one's (it ran inside it).
    const std::vector<double>& profile = optimised.last_profile_ms();
    REQUIRE(profile.size() == 2);
    CHECK(profile[0] > 0.0);
    CHECK((profile[1] == 0.0) == !second_reader);
    // The plan knew: the tensor between, the only intermediate, is not stored when paired.
    const MemoryPlan* plan = optimised.memory_plan();
    REQUIRE(plan != nullptr);
    const auto between = static_cast<size_t>(*graph->find_value("between"));
    CHECK(plan->kernel_pairs == (second_reader ? 0 : 1));
    CHECK(plan->between_pair[between] == !second_reader);
    CHECK(optimised.last_kernel_pairs()[0] == (second_reader ? -1 : 1));
    // The reference kernels run no pairs, so their plan stores it (unless it is a graph output).
    CHECK(reference.memory_plan()->kernel_pairs == 0);
    CHECK(reference.memory_plan()->offset[between] == (second_reader ? -1 : 0));
    CHECK(plan->arena_bytes == 0);
    CHECK((reference.memory_plan()->arena_bytes == 0) == second_reader);
  }
}
