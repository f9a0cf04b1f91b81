// A planned executor replays its plan without touching the heap: the Conv kernels' setup is kept
// per node, parallel_for takes its callable by reference, and the executor keeps its per-run
// state. This binary counts every replaceable operator new while a run is being measured.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <new>
#include <random>
#include <string>

#include "runtime/executor.h"
#include "tests/support/numerics.h"

namespace {

std::atomic<bool> counting{false};
std::atomic<int64_t> allocations{0};

}  // namespace

// The replacements every other form (arrays, nothrow) calls through; aligned forms are left alone.
void* operator new(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// GCC, seeing these inlined into code that news a block, takes the free for a mismatched
// deallocation; the operator new above is malloc, so it is not.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

// `blocks` times: dense 3x3 Conv + SiLU, depthwise 3x3, 1x1 Conv adding the block's input, 3x3
// MaxPool of stride 1, two Transposes, a 2x Resize and a 2x2 MaxPool of stride 2; 24 channels of
// 96 x 128, so that the planner pairs Convs (conv_pair.h).
std::shared_ptr<Graph> conv_stack(int blocks) {
  std::mt19937 rng(5);
  const int64_t c = 24;
  const Shape shape = {1, c, 96, 128};
  auto graph = std::make_shared<Graph>();
  ValueId x = graph->add_value("x", TensorDesc{DType::kF32, shape});
  graph->inputs().push_back(x);
  const auto conv = [&](const std::string& name, ValueId input, Shape weight, int64_t group, int64_t pad,
                        ValueId residual, const char* activation) {
    const ValueId w =
        graph->add_initializer(name + "_w", random_tensor(DType::kF32, std::move(weight), rng, -0.2, 0.2));
    const ValueId b = graph->add_initializer(name + "_b", random_tensor(DType::kF32, {c}, rng, -0.1, 0.1));
    const ValueId y = graph->add_value(name, TensorDesc{DType::kF32, shape});
    Node node{.op = OpKind::kConv, .name = name, .inputs = {input, w, b}, .outputs = {y}};
    if (residual != kNoValue) node.inputs.push_back(residual);
    node.attrs.set("group", group);
    node.attrs.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
    if (activation != nullptr) node.attrs.set("fused_activation", std::string(activation));
    graph->add_node(std::move(node));
    return y;
  };
  for (int i = 0; i < blocks; ++i) {
    const std::string block = "block" + std::to_string(i);
    const ValueId dense = conv(block + "_dense", x, {c, c, 3, 3}, 1, 1, kNoValue, "silu");
    const ValueId depthwise = conv(block + "_depthwise", dense, {c, 1, 3, 3}, c, 1, kNoValue, nullptr);
    const ValueId pointwise = conv(block + "_pointwise", depthwise, {c, c, 1, 1}, 1, 0, x, "relu");
    const ValueId pooled = graph->add_value(block + "_pool", TensorDesc{DType::kF32, shape});
    Node pool{.op = OpKind::kMaxPool, .name = block + "_pool", .inputs = {pointwise}, .outputs = {pooled}};
    pool.attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
    pool.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    graph->add_node(std::move(pool));
    // Transposed and back, upsampled 2x (nearest) and pooled back down.
    const auto transpose = [&](const std::string& name, ValueId input, Shape out_shape) {
      const ValueId y = graph->add_value(name, TensorDesc{DType::kF32, std::move(out_shape)});
      Node node{.op = OpKind::kTranspose, .name = name, .inputs = {input}, .outputs = {y}};
      node.attrs.set("perm", std::vector<int64_t>{0, 1, 3, 2});
      graph->add_node(std::move(node));
      return y;
    };
    const ValueId across = transpose(block + "_across", pooled, {1, c, 128, 96});
    const ValueId back = transpose(block + "_back", across, shape);
    const ValueId scales =
        graph->add_initializer(block + "_scales", Tensor::from_vector<float>({4}, {1.0f, 1.0f, 2.0f, 2.0f}));
    const ValueId up = graph->add_value(block + "_up", TensorDesc{DType::kF32, {1, c, 192, 256}});
    graph->add_node(
        Node{.op = OpKind::kResize, .name = block + "_up", .inputs = {back, kNoValue, scales}, .outputs = {up}});
    const ValueId down = graph->add_value(block + "_down", TensorDesc{DType::kF32, shape});
    Node shrink{.op = OpKind::kMaxPool, .name = block + "_down", .inputs = {up}, .outputs = {down}};
    shrink.attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
    shrink.attrs.set("strides", std::vector<int64_t>{2, 2});
    graph->add_node(std::move(shrink));
    x = down;
  }
  graph->outputs().push_back(x);
  return graph;
}

// Heap allocations of a steady-state run: the fewest over several runs after three warm-up runs.
// Kernels grow thread_local scratch the first time a thread takes a kind of task, and dynamic
// scheduling decides which thread takes which, so a worker may first meet one in a later run and
// grow its scratch then, once. That is bounded by the kinds of tasks, not by the runs.
int64_t allocations_per_replay(const std::shared_ptr<const Graph>& graph, std::span<const Tensor> inputs) {
  Result<Executor> executor = Executor::create(graph, ExecutorOptions{.threads = 2});
  REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
  for (int run = 0; run < 3; ++run) REQUIRE(executor->run(inputs).is_ok());
  REQUIRE(executor->memory_plan() != nullptr);
  CHECK(executor->memory_plan()->kernel_pairs > 0);
  int64_t fewest = std::numeric_limits<int64_t>::max();
  for (int run = 0; run < 5; ++run) {
    allocations = 0;
    counting = true;
    Result<std::vector<Tensor>> outputs = executor->run(inputs);
    counting = false;
    REQUIRE_MESSAGE(outputs.is_ok(), outputs.status().to_string());
    fewest = std::min(fewest, allocations.load());
  }
  return fewest;
}

}  // namespace

TEST_CASE("a replayed plan allocates the same few blocks however many nodes it runs") {
  std::mt19937 rng(6);
  const std::vector<Tensor> inputs = {random_tensor(DType::kF32, {1, 24, 96, 128}, rng)};
  const int64_t small = allocations_per_replay(conv_stack(1), inputs);
  const int64_t large = allocations_per_replay(conv_stack(4), inputs);
  INFO("allocations per run: 8 nodes ", small, ", 32 nodes ", large);
  // What remains is the returned vector and the tensors handed in and out (their shapes).
  CHECK(small <= 8);
  CHECK(large == small);
}
