// ExecutorOptions::batch_lanes: a batch run as whole images per thread must give every image what
// the batch gives run as one (the same single-threaded kernels per image, so bit for bit), at any
// batch size and thread count, reuse its output storage as a plain run does, and refuse outputs
// that do not lead with the batch.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "runtime/executor.h"
#include "tests/runtime/executor_helpers.h"
#include "tests/runtime/random_graph.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

Node conv_node(const std::string& name, std::vector<ValueId> inputs, ValueId output, int64_t group, int64_t pad,
               int64_t stride) {
  Node node{.op = OpKind::kConv, .name = name, .inputs = std::move(inputs), .outputs = {output}};
  node.attrs.set("group", group);
  node.attrs.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  node.attrs.set("strides", std::vector<int64_t>{stride, stride});
  node.attrs.set("fused_activation", std::string("silu"));
  return node;
}

// x [-1, 8, 20, 20] -> dense 3x3/2 (16) -> depthwise 3x3 -> 1x1 (24) -> y, the depthwise output
// also an output: the threaded Conv paths (bands, planes, GEMM blocks) inside every lane.
std::shared_ptr<Graph> conv_stack() {
  std::mt19937 rng(31);
  auto graph = std::make_shared<Graph>();
  const ValueId x = graph->add_value("x", TensorDesc{DType::kF32, {-1, 8, 20, 20}});
  graph->inputs().push_back(x);
  const ValueId w0 = graph->add_initializer("w0", random_tensor(DType::kF32, {16, 8, 3, 3}, rng, -0.3, 0.3));
  const ValueId w1 = graph->add_initializer("w1", random_tensor(DType::kF32, {16, 1, 3, 3}, rng, -0.3, 0.3));
  const ValueId w2 = graph->add_initializer("w2", random_tensor(DType::kF32, {24, 16, 1, 1}, rng, -0.3, 0.3));
  const ValueId b2 = graph->add_initializer("b2", random_tensor(DType::kF32, {24}, rng, -0.1, 0.1));
  const ValueId a = graph->add_value("a", TensorDesc{DType::kF32, {-1, 16, 10, 10}});
  const ValueId d = graph->add_value("d", TensorDesc{DType::kF32, {-1, 16, 10, 10}});
  const ValueId y = graph->add_value("y", TensorDesc{DType::kF32, {-1, 24, 10, 10}});
  graph->add_node(conv_node("stem", {x, w0}, a, 1, 1, 2));
  graph->add_node(conv_node("depthwise", {a, w1}, d, 16, 1, 1));
  graph->add_node(conv_node("pointwise", {d, w2, b2}, y, 1, 0, 1));
  graph->outputs() = {y, d};
  return graph;
}

}  // namespace

TEST_CASE("a batch in lanes gives each image what the whole batch gives on one thread, at any batch size") {
  std::mt19937 rng(32);
  const std::shared_ptr<const Graph> graph = conv_stack();
  Executor one_thread = make_executor(graph, {.threads = 1});
  for (const int threads : {2, 3}) {
    Executor lanes = make_executor(graph, {.threads = threads, .poison_arena = true, .batch_lanes = true});
    for (int64_t batch = 1; batch <= 7; ++batch) {
      CAPTURE(threads);
      CAPTURE(batch);
      const Tensor x = random_tensor(DType::kF32, {batch, 8, 20, 20}, rng);
      const std::vector<Tensor> want = run_ok(one_thread, std::span(&x, 1));
      for (int run = 0; run < 2; ++run) {  // the second run reuses the lanes, their plans and outputs
        const std::vector<Tensor> got = run_ok(lanes, std::span(&x, 1));
        REQUIRE(got.size() == want.size());
        for (size_t i = 0; i < got.size(); ++i) CHECK(bit_identical(got[i], want[i]));
      }
      // The plan reported is a lane's (whole images per thread) from `threads` images on.
      REQUIRE(lanes.memory_plan() != nullptr);
      const int64_t planned_batch = lanes.memory_plan()->descs[static_cast<size_t>(graph->inputs()[0])].shape[0];
      CHECK(planned_batch == (batch >= threads ? batch / threads : batch));
    }
  }
}

TEST_CASE("random batch-separable graphs give the same outputs in lanes as split across the threads") {
  std::mt19937 rng(33);
  int compared = 0;
  for (int trial = 0; trial < 20; ++trial) {
    CAPTURE(trial);
    const auto graph = make_random_graph(rng, 4 + trial % 12, /*dynamic_batch=*/true);
    Executor split = make_executor(graph, {.threads = 2});
    Executor lanes = make_executor(graph, {.threads = 2, .batch_lanes = true});
    const Tensor x = random_tensor(DType::kF32, {5, 4, 4, 8}, rng);
    const std::vector<Tensor> want = run_ok(split, std::span(&x, 1));
    Result<std::vector<Tensor>> got = lanes.run(std::span(&x, 1));
    if (!got.is_ok()) {
      // A random Transpose may move the batch axis: that graph is not batch-separable, and lanes say so.
      CHECK(got.status().message().find("does not lead with the batch") != std::string::npos);
      continue;
    }
    REQUIRE(got->size() == want.size());
    for (size_t i = 0; i < got->size(); ++i) {
      const ErrorStats error = compare_tensors((*got)[i], want[i]);
      CHECK_MESSAGE(error.relative_l2 <= 1e-6, error.to_string());
    }
    ++compared;
  }
  CHECK(compared >= 10);  // most random graphs keep the batch in front
}

TEST_CASE("a batch in lanes writes a released output in place next run, and leaves a kept one alone") {
  std::mt19937 rng(34);
  const std::shared_ptr<const Graph> graph = conv_stack();
  Executor lanes = make_executor(graph, {.threads = 2, .batch_lanes = true});
  Executor one_thread = make_executor(graph, {.threads = 1});
  const Tensor x1 = random_tensor(DType::kF32, {4, 8, 20, 20}, rng);
  const Tensor x2 = random_tensor(DType::kF32, {4, 8, 20, 20}, rng);
  std::vector<const void*> first_storage;
  for (const Tensor& t : run_ok(lanes, std::span(&x1, 1))) first_storage.push_back(t.raw_data());
  const std::vector<Tensor> second = run_ok(lanes, std::span(&x2, 1));
  const std::vector<Tensor> want = run_ok(one_thread, std::span(&x2, 1));
  for (size_t i = 0; i < second.size(); ++i) {
    CHECK(second[i].raw_data() == first_storage[i]);
    CHECK(bit_identical(second[i], want[i]));
  }
  const std::vector<Tensor> third = run_ok(lanes, std::span(&x1, 1));
  for (size_t i = 0; i < third.size(); ++i) CHECK(third[i].raw_data() != second[i].raw_data());
  CHECK(bit_identical(second[0], want[0]));  // the kept output is untouched by the third run
}

TEST_CASE("an output that does not lead with the batch is refused in lanes, naming it") {
  auto graph = std::make_shared<Graph>();
  const ValueId x = graph->add_value("x", TensorDesc{DType::kF32, {-1, 3}});
  const ValueId y = graph->add_value("transposed", TensorDesc{DType::kF32, {3, -1}});
  graph->inputs().push_back(x);
  Node transpose{.op = OpKind::kTranspose, .name = "transpose", .inputs = {x}, .outputs = {y}};
  transpose.attrs.set("perm", std::vector<int64_t>{1, 0});
  graph->add_node(std::move(transpose));
  graph->outputs().push_back(y);
  Executor lanes = make_executor(graph, {.threads = 2, .batch_lanes = true});
  const Tensor x4 = Tensor::from_vector<float>({4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Result<std::vector<Tensor>> refused = lanes.run(std::span(&x4, 1));
  REQUIRE(!refused.is_ok());
  CHECK(refused.status().message().find("'transposed'") != std::string::npos);
  CHECK(refused.status().message().find("does not lead with the batch") != std::string::npos);
  // Below the thread count there are no lanes: one image runs as it is.
  const Tensor x1 = Tensor::from_vector<float>({1, 3}, {1, 2, 3});
  const std::vector<Tensor> one = run_ok(lanes, std::span(&x1, 1));
  CHECK(one[0].shape() == Shape{3, 1});
}
