// Two Convs run as one kernel (runtime/ops/conv_pair.h) against the reference kernels run one
// after the other, for every kind of pair: depthwise -> 1x1, dense -> depthwise and dense -> strided dense. Strides,
// kernel sizes, dilations, paddings, epilogues on both, a residual on the 1x1 (the block's input,
// as BlazeFace adds it), batches, bands that do not divide the height, and 1 to 3 threads; the
// depthwise -> 1x1 pair also with its output over its input (as the memory plan places a block
// whose input dies in it); pairs that do not qualify run nothing. The kernel takes only pairs
// whose tensors exceed L2 (2 MiB together), so the shapes are that large.
#include "runtime/ops/conv_pair.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tests/ops/op_test_util.h"
#include "tests/support/numerics.h"

namespace edgefuse::test {
namespace {

struct PairCase {
  int64_t batch, channels, height, width, kernel, stride, out_channels;
  std::string depthwise_activation, pointwise_activation;
  int residual;  // -1: none; 0: added before the 1x1's activation; 1: after
};

Node conv(int inputs, int64_t kernel, int64_t stride, int64_t group, const std::string& activation,
          int64_t dilation = 1) {
  Node node = make_node(OpKind::kConv, inputs);
  const int64_t pad = kernel / 2 * dilation;
  node.attrs.set("strides", std::vector<int64_t>{stride, stride});
  node.attrs.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  node.attrs.set("dilations", std::vector<int64_t>{dilation, dilation});
  node.attrs.set("group", group);
  if (!activation.empty()) node.attrs.set("fused_activation", activation);
  return node;
}

// A depthwise -> 1x1 case's input, weights and nodes, random from `rng`.
struct PairTensors {
  Tensor x, dw_w, dw_b, pw_w, pw_b;
  Node depthwise, pointwise;
};
PairTensors make_pair_tensors(const PairCase& c, std::mt19937& rng) {
  PairTensors t;
  t.x = random_tensor(DType::kF32, {c.batch, c.channels, c.height, c.width}, rng);
  t.dw_w = random_tensor(DType::kF32, {c.channels, 1, c.kernel, c.kernel}, rng);
  t.dw_b = random_tensor(DType::kF32, {c.channels}, rng);
  t.pw_w = random_tensor(DType::kF32, {c.out_channels, c.channels, 1, 1}, rng);
  t.pw_b = random_tensor(DType::kF32, {c.out_channels}, rng);
  t.depthwise = conv(3, c.kernel, c.stride, c.channels, c.depthwise_activation);
  t.pointwise = conv(c.residual >= 0 ? 4 : 3, 1, 1, 1, c.pointwise_activation);
  if (c.residual >= 0) t.pointwise.attrs.set("fused_residual_after_activation", int64_t{c.residual});
  return t;
}

// Runs the pair with the optimised kernel (into a fresh output); false when it declined. The
// first node's weights are constant (cached packing) when `first_cached`, else the second's.
Result<bool> run_pair(const Node& first_node, const std::vector<const Tensor*>& first_inputs, Tensor& between,
                      const Node& second_node, std::vector<const Tensor*> second_inputs, Tensor& out, ThreadPool* pool,
                      bool first_cached = false) {
  std::vector<Tensor*> first_outputs = {&between};
  std::vector<Tensor*> second_outputs = {&out};
  second_inputs[0] = &between;
  KernelCache first_cache, second_cache;
  const KernelArgs first{first_node, first_inputs, first_outputs, pool, &first_cache, first_cached ? 2u : 0u};
  const KernelArgs second{second_node, second_inputs, second_outputs, pool, &second_cache, first_cached ? 0u : 2u};
  return cpu_conv_pair(first, second);
}

// A NaN-filled tensor of `shape`: the pair must neither need nor write the tensor between.
Tensor poisoned(const Shape& shape) {
  Tensor t = Tensor::empty(DType::kF32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::nanf("");
  return t;
}

// What every pair run must show: it ran, its output matches the two Convs run one by one, and
// it never wrote the tensor between (`unused`, NaN-filled).
void check_pair_ran(const Result<bool>& ran, const Tensor& out, const Tensor& expected, const Tensor& unused) {
  REQUIRE_MESSAGE(ran.is_ok(), ran.status().to_string());
  REQUIRE(*ran);
  const ErrorStats error = compare_tensors(out, expected);
  CHECK_MESSAGE(error.relative_l2 <= 1e-5, error.to_string());
  CHECK(std::isnan(unused.data<float>()[0]));
}

}  // namespace

TEST_CASE("a depthwise Conv and its 1x1 Conv as one kernel equal the two run one by one") {
  const PairCase cases[] = {
      {1, 24, 75, 123, 3, 1, 24, "", "relu", 1},        // BlazeFace block: residual, then ReLU
      {2, 16, 100, 110, 3, 2, 32, "silu", "silu", -1},  // YOLOX downsampling, batch 2
      {1, 12, 131, 127, 5, 1, 20, "relu", "", 0},       // 5x5, residual before no activation
      {1, 64, 3, 1100, 3, 1, 64, "", "sigmoid", 0},     // fewer rows than a row block
      {1, 32, 104, 104, 3, 1, 16, "silu", "silu", -1},  // YOLOX-nano's 104 x 104 block
  };
  ThreadPool pool2(2), pool3(3);
  uint32_t seed = 40;
  for (const PairCase& c : cases) {
    INFO("N", c.batch, " C", c.channels, " ", c.height, "x", c.width, " k", c.kernel, " s", c.stride, " M",
         c.out_channels, " residual ", c.residual);
    std::mt19937 rng(seed++);
    const PairTensors t = make_pair_tensors(c, rng);
    const Tensor &x = t.x, &dw_w = t.dw_w, &dw_b = t.dw_b, &pw_w = t.pw_w, &pw_b = t.pw_b;
    const Node &depthwise = t.depthwise, &pointwise = t.pointwise;

    const std::vector<const Tensor*> dw_inputs = {&x, &dw_w, &dw_b};
    auto between = run_op(depthwise, dw_inputs, true);
    REQUIRE_MESSAGE(between.is_ok(), between.status().to_string());
    // The residual has the 1x1's output shape: the block's input when that fits, else random.
    const Shape out_shape = {c.batch, c.out_channels, between->at(0).dim(2), between->at(0).dim(3)};
    const Tensor residual = c.residual >= 0 && out_shape == x.shape() ? x : random_tensor(DType::kF32, out_shape, rng);
    std::vector<const Tensor*> pw_inputs = {&between->at(0), &pw_w, &pw_b};
    if (c.residual >= 0) pw_inputs.push_back(&residual);
    auto expected = run_op(pointwise, pw_inputs, true);
    REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());

    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool3}) {
      CAPTURE((pool != nullptr ? pool->size() : 1));
      Tensor unused = poisoned(between->at(0).shape());
      Tensor out = Tensor::empty(DType::kF32, out_shape);
      Result<bool> ran = run_pair(depthwise, dw_inputs, unused, pointwise, pw_inputs, out, pool);
      check_pair_ran(ran, out, expected->at(0), unused);
    }
  }
}

TEST_CASE("a depthwise Conv and its 1x1 Conv run in place equal the two run one by one") {
  // The 1x1's output in the depthwise input's bytes, the residual (when there is one) those bytes
  // too, as the memory plan places a block whose input dies in it.
  const PairCase cases[] = {
      {1, 24, 75, 123, 3, 1, 24, "", "relu", 0},        // BlazeFace block: residual, then ReLU
      {2, 16, 100, 110, 3, 1, 16, "silu", "silu", 1},   // residual after the activation, batch 2
      {1, 12, 131, 127, 5, 1, 12, "relu", "", 0},       // 5x5: two edge rows on each side of a band
      {1, 64, 3, 1100, 3, 1, 64, "", "sigmoid", 0},     // bands of one row: every row an edge row
      {1, 32, 104, 104, 3, 1, 32, "silu", "silu", -1},  // YOLOX-nano's 104 x 104 block
  };
  ThreadPool pool2(2), pool3(3);
  uint32_t seed = 70;
  for (const PairCase& c : cases) {
    INFO("N", c.batch, " C", c.channels, " ", c.height, "x", c.width, " k", c.kernel, " residual ", c.residual);
    std::mt19937 rng(seed++);
    const PairTensors t = make_pair_tensors(c, rng);
    const Tensor &x = t.x, &dw_w = t.dw_w, &dw_b = t.dw_b, &pw_w = t.pw_w, &pw_b = t.pw_b;
    const Node &depthwise = t.depthwise, &pointwise = t.pointwise;
    const std::vector<const Tensor*> dw_inputs = {&x, &dw_w, &dw_b};
    auto between = run_op(depthwise, dw_inputs, true);
    REQUIRE_MESSAGE(between.is_ok(), between.status().to_string());
    std::vector<const Tensor*> pw_inputs = {&between->at(0), &pw_w, &pw_b};
    if (c.residual >= 0) pw_inputs.push_back(&x);
    auto expected = run_op(pointwise, pw_inputs, true);
    REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());

    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool3}) {
      CAPTURE((pool != nullptr ? pool->size() : 1));
      Tensor block = x.clone();  // the input, then the output
      const std::vector<const Tensor*> block_inputs = {&block, &dw_w, &dw_b};
      std::vector<const Tensor*> block_pw_inputs = {nullptr, &pw_w, &pw_b};
      if (c.residual >= 0) block_pw_inputs.push_back(&block);
      Tensor unused = poisoned(between->at(0).shape());
      Result<bool> ran = run_pair(depthwise, block_inputs, unused, pointwise, block_pw_inputs, block, pool);
      check_pair_ran(ran, block, expected->at(0), unused);
    }

    // What the planner asks: only a stride-1 block whose output has the input's shape.
    std::vector<TensorDesc> descs = {x.desc(),    dw_w.desc(), dw_b.desc(), between->at(0).desc(),
                                     pw_w.desc(), pw_b.desc(), x.desc()};
    Node first = depthwise, second = pointwise;
    first.inputs = {0, 1, 2};
    first.outputs = {3};
    second.inputs = {3, 4, 5};
    if (c.residual >= 0) second.inputs.push_back(0);
    second.outputs = {6};
    CHECK(cpu_conv_pair_in_place(first, second, descs));
  }
}

TEST_CASE("a depthwise -> 1x1 pair runs in place only when stride 1 and as wide or (one image) wider") {
  const auto descs_for = [](int64_t batch, int64_t stride, int64_t out_channels) {
    const int64_t size = 128 / stride;
    return std::vector<TensorDesc>{{DType::kF32, {batch, 32, 128, 128}},
                                   {DType::kF32, {32, 1, 3, 3}},
                                   {DType::kF32, {32}},
                                   {DType::kF32, {batch, 32, size, size}},
                                   {DType::kF32, {out_channels, 32, 1, 1}},
                                   {DType::kF32, {out_channels}},
                                   {DType::kF32, {batch, out_channels, size, size}}};
  };
  const auto in_place = [&](int64_t batch, int64_t stride, int64_t out_channels) {
    Node first = conv(3, 3, stride, 32, "");
    Node second = conv(3, 1, 1, 1, "relu");
    first.inputs = {0, 1, 2};
    first.outputs = {3};
    second.inputs = {3, 4, 5};
    second.outputs = {6};
    const std::vector<TensorDesc> descs = descs_for(batch, stride, out_channels);
    CHECK(cpu_conv_pair_planned(first, second, descs));  // a pair either way
    return cpu_conv_pair_in_place(first, second, descs);
  };
  CHECK(in_place(1, 1, 32));
  CHECK(in_place(1, 1, 48));        // wider: its last planes lie past the input's end
  CHECK_FALSE(in_place(2, 1, 48));  // the first image's output would cover the second's input
  CHECK_FALSE(in_place(1, 1, 16));  // narrower: the input's last planes are read after
  CHECK_FALSE(in_place(1, 2, 32));
}

namespace {

// Runs the pair of `t` at any size (as a memory pair) with its output in a NaN-filled tensor of
// `expected`'s shape whose first elements hold a copy of `over`, the tensor the memory plan places
// the output over: the 1x1 adds that copy as its residual, and the depthwise reads it too when
// `depthwise_reads_over` (else t.x). Compares with `expected` on 1 to 3 threads.
void check_memory_pair(const PairTensors& t, const Tensor& over, bool depthwise_reads_over, const Shape& between_shape,
                       const Tensor& expected) {
  ThreadPool pool2(2), pool3(3);
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool3}) {
    CAPTURE((pool != nullptr ? pool->size() : 1));
    Tensor block = poisoned(expected.shape());
    std::copy_n(over.data<float>(), over.numel(), block.data<float>());
    const Tensor copy = Tensor::wrap(DType::kF32, over.shape(), block.data<float>());
    Tensor unused = poisoned(between_shape);
    const std::vector<const Tensor*> first_inputs = {depthwise_reads_over ? &copy : &t.x, &t.dw_w, &t.dw_b};
    const std::vector<const Tensor*> second_inputs = {&unused, &t.pw_w, &t.pw_b, &copy};
    std::vector<Tensor*> first_outputs = {&unused}, second_outputs = {&block};
    KernelCache first_cache, second_cache;
    const KernelArgs first{t.depthwise, first_inputs, first_outputs, pool, &first_cache, 0u};
    const KernelArgs second{t.pointwise, second_inputs, second_outputs, pool, &second_cache, 2u};
    Result<bool> ran = cpu_conv_pair(first, second, /*any_size=*/true);
    check_pair_ran(ran, block, expected, unused);
  }
}

}  // namespace

TEST_CASE("a pair below the size threshold runs only when asked to run at any size, and then as the two") {
  // BlazeFace-128's widening 64 x 64 block (24 -> 28 channels, the residual the input's 24), the
  // output over the input as the memory plan places it.
  const PairCase c{1, 24, 64, 64, 3, 1, 28, "", "relu", 0};
  std::mt19937 rng(91);
  const PairTensors t = make_pair_tensors(c, rng);
  const std::vector<const Tensor*> dw_inputs = {&t.x, &t.dw_w, &t.dw_b};
  auto between = run_op(t.depthwise, dw_inputs, true);
  REQUIRE_MESSAGE(between.is_ok(), between.status().to_string());
  const std::vector<const Tensor*> pw_inputs = {&between->at(0), &t.pw_w, &t.pw_b, &t.x};
  auto expected = run_op(t.pointwise, pw_inputs, true);
  REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());

  // 3 x 384 KiB of tensors: under kConvPairMinBytes, so a pair only at any size.
  Tensor unused = poisoned(between->at(0).shape());
  Tensor out = Tensor::empty(DType::kF32, expected->at(0).shape());
  Result<bool> declined = run_pair(t.depthwise, dw_inputs, unused, t.pointwise, pw_inputs, out, nullptr);
  REQUIRE(declined.is_ok());
  CHECK_FALSE(*declined);
  check_memory_pair(t, t.x, true, between->at(0).shape(), expected->at(0));
}

TEST_CASE("a strided depthwise -> 1x1 pair writes its output over the residual it adds") {
  // BlazeFace-128's downsampling block: 64 x 64 x 24 -> depthwise 3x3/2 -> 1x1 to 28 channels,
  // adding the max-pooled input (24 channels, random here); the output in the residual's bytes, as
  // the memory plan places it, at any size.
  // Also one deep enough (400 channels) that the 1x1's GEMM would run in depth slices: it must
  // not, with the residual in its output's bytes.
  for (const PairCase& deep :
       {PairCase{1, 24, 64, 64, 3, 2, 28, "", "relu", 0}, PairCase{1, 400, 12, 12, 3, 2, 408, "", "relu", 0}}) {
    CAPTURE(deep.channels);
    std::mt19937 deep_rng(93);
    const PairTensors deep_tensors = make_pair_tensors(deep, deep_rng);
    const Tensor pooled = random_tensor(DType::kF32, {1, deep.channels, deep.height / 2, deep.width / 2}, deep_rng);
    const std::vector<const Tensor*> dw_inputs = {&deep_tensors.x, &deep_tensors.dw_w, &deep_tensors.dw_b};
    auto between = run_op(deep_tensors.depthwise, dw_inputs, true);
    REQUIRE_MESSAGE(between.is_ok(), between.status().to_string());
    const std::vector<const Tensor*> pw_inputs = {&between->at(0), &deep_tensors.pw_w, &deep_tensors.pw_b, &pooled};
    auto expected = run_op(deep_tensors.pointwise, pw_inputs, true);
    REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
    check_memory_pair(deep_tensors, pooled, false, between->at(0).shape(), expected->at(0));
  }
  const PairCase c{1, 24, 64, 64, 3, 2, 28, "", "relu", 0};
  std::mt19937 rng(93);
  const PairTensors t = make_pair_tensors(c, rng);

  // What the planner asks: over the residual when there is one, its planes the output's first.
  const auto over_residual = [&](bool with_residual, int64_t batch) {
    std::vector<TensorDesc> descs = {{DType::kF32, {batch, 24, 64, 64}},
                                     t.dw_w.desc(),
                                     t.dw_b.desc(),
                                     {DType::kF32, {batch, 24, 32, 32}},
                                     t.pw_w.desc(),
                                     t.pw_b.desc(),
                                     {DType::kF32, {batch, 24, 32, 32}},
                                     {DType::kF32, {batch, 28, 32, 32}}};
    Node first = t.depthwise, second = t.pointwise;
    first.inputs = {0, 1, 2};
    first.outputs = {3};
    second.inputs = {3, 4, 5};
    if (with_residual) second.inputs.push_back(6);
    second.outputs = {7};
    return cpu_conv_pair_over_residual_any_size(first, second, descs);
  };
  CHECK(over_residual(true, 1));
  CHECK_FALSE(over_residual(false, 1));
  CHECK_FALSE(over_residual(true, 2));  // two images: the first's output would cover the second's residual
}

struct DenseCase {
  int64_t batch, channels, height, width, kernel, stride, out_channels;
  int64_t depthwise_kernel, depthwise_stride, depthwise_dilation;
  std::string dense_activation, depthwise_activation;
};

TEST_CASE("a dense Conv and the depthwise Conv after it as one kernel equal the two run one by one") {
  const DenseCase cases[] = {
      {1, 3, 416, 416, 6, 2, 16, 3, 2, 1, "silu", "silu"},  // YOLOX-nano's folded stem, then its first dw
      {2, 3, 200, 150, 3, 1, 16, 3, 1, 1, "relu", ""},      // stride 1 after stride 1: two overlap rows
      {1, 4, 257, 203, 5, 2, 24, 5, 1, 1, "", "relu"},      // odd sizes, 5x5 depthwise: four overlap rows
      {1, 8, 181, 190, 3, 1, 20, 3, 2, 2, "", "sigmoid"},   // dilated depthwise
      {1, 3, 300, 260, 3, 2, 32, 3, 3, 1, "silu", ""},      // depthwise stride 3: bands do not overlap
  };
  ThreadPool pool2(2), pool3(3);
  uint32_t seed = 70;
  for (const DenseCase& c : cases) {
    INFO("N", c.batch, " C", c.channels, " ", c.height, "x", c.width, " k", c.kernel, " s", c.stride, " M",
         c.out_channels, " dw k", c.depthwise_kernel, " s", c.depthwise_stride, " d", c.depthwise_dilation);
    std::mt19937 rng(seed++);
    const Tensor x = random_tensor(DType::kF32, {c.batch, c.channels, c.height, c.width}, rng);
    const Tensor w = random_tensor(DType::kF32, {c.out_channels, c.channels, c.kernel, c.kernel}, rng);
    const Tensor b = random_tensor(DType::kF32, {c.out_channels}, rng);
    const Tensor dw_w = random_tensor(DType::kF32, {c.out_channels, 1, c.depthwise_kernel, c.depthwise_kernel}, rng);
    const Tensor dw_b = random_tensor(DType::kF32, {c.out_channels}, rng);
    const Node dense = conv(3, c.kernel, c.stride, 1, c.dense_activation);
    const Node depthwise =
        conv(3, c.depthwise_kernel, c.depthwise_stride, c.out_channels, c.depthwise_activation, c.depthwise_dilation);

    const std::vector<const Tensor*> dense_inputs = {&x, &w, &b};
    auto between = run_op(dense, dense_inputs, true);
    REQUIRE_MESSAGE(between.is_ok(), between.status().to_string());
    const std::vector<const Tensor*> dw_inputs = {&between->at(0), &dw_w, &dw_b};
    auto expected = run_op(depthwise, dw_inputs, true);
    REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());

    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool3}) {
      CAPTURE((pool != nullptr ? pool->size() : 1));
      Tensor unused = poisoned(between->at(0).shape());
      Tensor out = Tensor::empty(DType::kF32, expected->at(0).shape());
      Result<bool> ran = run_pair(dense, dense_inputs, unused, depthwise, dw_inputs, out, pool, true);
      check_pair_ran(ran, out, expected->at(0), unused);
    }
  }
}

struct DenseDenseCase {
  int64_t batch, channels, height, width, kernel, stride, pad, middle;
  int64_t second_kernel, second_stride, out_channels;
  std::string first_activation, second_activation;
};

TEST_CASE("a dense Conv and the strided dense Conv after it as one kernel equal the two run one by one") {
  const DenseDenseCase cases[] = {
      {1, 3, 320, 320, 3, 2, 1, 16, 3, 2, 24, "silu", "silu"},  // YOLOv8's stem, then its first downsampling
      {1, 3, 256, 288, 6, 2, 2, 16, 3, 2, 32, "silu", "silu"},  // YOLOv5's 6x6 stem
      {2, 3, 150, 203, 3, 1, 1, 12, 5, 2, 20, "relu", ""},      // odd sizes, a 5x5 second, two images
      {1, 4, 181, 190, 3, 1, 1, 20, 3, 3, 8, "", "sigmoid"},    // stride 3: bands do not overlap
  };
  ThreadPool pool2(2), pool3(3);
  uint32_t seed = 90;
  for (const DenseDenseCase& c : cases) {
    INFO("N", c.batch, " C", c.channels, " ", c.height, "x", c.width, " k", c.kernel, " s", c.stride, " M", c.middle,
         " then k", c.second_kernel, " s", c.second_stride, " M", c.out_channels);
    std::mt19937 rng(seed++);
    const Tensor x = random_tensor(DType::kF32, {c.batch, c.channels, c.height, c.width}, rng);
    const Tensor w = random_tensor(DType::kF32, {c.middle, c.channels, c.kernel, c.kernel}, rng);
    const Tensor b = random_tensor(DType::kF32, {c.middle}, rng);
    const Tensor w2 = random_tensor(DType::kF32, {c.out_channels, c.middle, c.second_kernel, c.second_kernel}, rng);
    const Tensor b2 = random_tensor(DType::kF32, {c.out_channels}, rng);
    Node first = conv(3, c.kernel, c.stride, 1, c.first_activation);
    first.attrs.set("pads", std::vector<int64_t>(4, c.pad));
    const Node second = conv(3, c.second_kernel, c.second_stride, 1, c.second_activation);

    const std::vector<const Tensor*> first_inputs = {&x, &w, &b};
    auto between = run_op(first, first_inputs, true);
    REQUIRE_MESSAGE(between.is_ok(), between.status().to_string());
    const std::vector<const Tensor*> second_inputs = {&between->at(0), &w2, &b2};
    auto expected = run_op(second, second_inputs, true);
    REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());

    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool3}) {
      CAPTURE((pool != nullptr ? pool->size() : 1));
      Tensor unused = poisoned(between->at(0).shape());
      Tensor out = Tensor::empty(DType::kF32, expected->at(0).shape());
      Result<bool> ran = run_pair(first, first_inputs, unused, second, second_inputs, out, pool, true);
      check_pair_ran(ran, out, expected->at(0), unused);
    }
  }
}

TEST_CASE("a dense Conv and a dense Conv of stride 1 after it run nothing (their bands would overlap)") {
  std::mt19937 rng(11);
  const Tensor x = random_tensor(DType::kF32, {1, 16, 160, 160}, rng);
  const Tensor w = random_tensor(DType::kF32, {16, 16, 3, 3}, rng);
  Tensor between = Tensor::empty(DType::kF32, {1, 16, 160, 160});
  Tensor out = Tensor::empty(DType::kF32, {1, 16, 160, 160});
  const Node dense = conv(2, 3, 1, 1, "");
  Result<bool> ran = run_pair(dense, {&x, &w}, between, dense, {&between, &w}, out, nullptr, true);
  REQUIRE(ran.is_ok());
  CHECK_FALSE(*ran);
}

TEST_CASE("a dense Conv and a depthwise Conv that do not qualify as a pair run nothing") {
  std::mt19937 rng(9);
  const Tensor x = random_tensor(DType::kF32, {1, 3, 416, 416}, rng);
  const Tensor w = random_tensor(DType::kF32, {16, 3, 3, 3}, rng);
  const Tensor dw_w = random_tensor(DType::kF32, {16, 1, 3, 3}, rng);
  const Tensor pw_w = random_tensor(DType::kF32, {16, 16, 1, 1}, rng);
  Tensor between = Tensor::empty(DType::kF32, {1, 16, 416, 416});
  Tensor out = Tensor::empty(DType::kF32, {1, 16, 416, 416});
  const Node dense = conv(2, 3, 1, 1, "");
  const Node depthwise = conv(2, 3, 1, 16, "");
  // A residual on either.
  Node dense_with_residual = conv(4, 3, 1, 1, "");
  Result<bool> ran = run_pair(dense_with_residual, {&x, &w, nullptr, &between}, between, depthwise, {&between, &dw_w},
                              out, nullptr, true);
  REQUIRE(ran.is_ok());
  CHECK_FALSE(*ran);
  Node depthwise_with_residual = conv(4, 3, 1, 16, "");
  ran =
      run_pair(dense, {&x, &w}, between, depthwise_with_residual, {&between, &dw_w, nullptr, &out}, out, nullptr, true);
  REQUIRE(ran.is_ok());
  CHECK_FALSE(*ran);
  // A 1x1 first: its GEMM reads the input planes in place, there are no rows to band.
  const Tensor x16 = random_tensor(DType::kF32, {1, 16, 416, 416}, rng);
  ran = run_pair(conv(2, 1, 1, 1, ""), {&x16, &pw_w}, between, depthwise, {&between, &dw_w}, out, nullptr, true);
  REQUIRE(ran.is_ok());
  CHECK_FALSE(*ran);
  // Small enough to stay in L2 between two kernels.
  const Tensor small = random_tensor(DType::kF32, {1, 3, 40, 40}, rng);
  Tensor small_between = Tensor::empty(DType::kF32, {1, 16, 40, 40});
  Tensor small_out = Tensor::empty(DType::kF32, {1, 16, 40, 40});
  ran = run_pair(dense, {&small, &w}, small_between, depthwise, {&small_between, &dw_w}, small_out, nullptr, true);
  REQUIRE(ran.is_ok());
  CHECK_FALSE(*ran);
}

TEST_CASE("a pair that is not depthwise then 1x1 runs nothing and says so") {
  std::mt19937 rng(7);
  const Tensor x = random_tensor(DType::kF32, {1, 8, 12, 12}, rng);
  const Tensor dw_w = random_tensor(DType::kF32, {8, 1, 3, 3}, rng);
  const Tensor dense_w = random_tensor(DType::kF32, {8, 8, 3, 3}, rng);
  const Tensor pw_w = random_tensor(DType::kF32, {8, 8, 1, 1}, rng);
  Tensor between = Tensor::empty(DType::kF32, {1, 8, 12, 12});
  Tensor out = Tensor::empty(DType::kF32, {1, 8, 12, 12});
  const Node depthwise = conv(2, 3, 1, 8, "");
  const Node dense = conv(2, 3, 1, 1, "");
  const Node pointwise = conv(2, 1, 1, 1, "");
  // The first is not depthwise.
  Result<bool> ran = run_pair(dense, {&x, &dense_w}, between, pointwise, {&between, &pw_w}, out, nullptr);
  REQUIRE(ran.is_ok());
  CHECK_FALSE(*ran);
  // The second is not 1x1.
  ran = run_pair(depthwise, {&x, &dw_w}, between, dense, {&between, &dense_w}, out, nullptr);
  REQUIRE(ran.is_ok());
  CHECK_FALSE(*ran);
  // A residual on the depthwise Conv.
  Node with_residual = conv(4, 3, 1, 8, "");
  ran = run_pair(with_residual, {&x, &dw_w, nullptr, &x}, between, pointwise, {&between, &pw_w}, out, nullptr);
  REQUIRE(ran.is_ok());
  CHECK_FALSE(*ran);
  // A qualifying pair whose tensors stay in L2 anyway (3 x 18 KiB).
  ran = run_pair(depthwise, {&x, &dw_w}, between, pointwise, {&between, &pw_w}, out, nullptr);
  REQUIRE(ran.is_ok());
  CHECK_FALSE(*ran);
}

}  // namespace edgefuse::test
