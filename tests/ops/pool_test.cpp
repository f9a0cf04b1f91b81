// MaxPool, AveragePool and GlobalAveragePool: the optimised MaxPool against the reference on
// awkward shapes, the references against independent float64 loops and ONNX's documented
// examples (ceil_mode, pads, Indices with both storage orders), and shape errors.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/ops/ops.h"
#include "tests/ops/op_test_util.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

struct PoolCase {
  int64_t batch, channels, height, width, kh, kw, stride_h, stride_w;
  std::vector<int64_t> pads;  // begin h, begin w, end h, end w
  std::string auto_pad;
  int64_t ceil_mode;
};

std::string describe(const PoolCase& c) {
  return make_message("N", c.batch, " C", c.channels, " ", c.height, "x", c.width, " k", c.kh, "x", c.kw, " s",
                      c.stride_h, ",", c.stride_w, " pads ", shape_to_string(c.pads), " auto_pad ", c.auto_pad,
                      " ceil ", c.ceil_mode);
}

Node pool_node(OpKind op, const PoolCase& c) {
  Node node = make_node(op, 1);
  node.attrs.set("kernel_shape", std::vector<int64_t>{c.kh, c.kw});
  node.attrs.set("strides", std::vector<int64_t>{c.stride_h, c.stride_w});
  node.attrs.set("ceil_mode", c.ceil_mode);
  if (!c.auto_pad.empty()) {
    node.attrs.set("auto_pad", c.auto_pad);
  } else {
    node.attrs.set("pads", c.pads);
  }
  return node;
}

const std::vector<PoolCase>& pool_cases() {
  static const std::vector<PoolCase> cases = {
      // YOLOX SPP: 5, 9, 13 stride 1 with same padding
      {1, 5, 13, 13, 5, 5, 1, 1, {2, 2, 2, 2}, "", 0},
      {2, 3, 13, 127, 9, 9, 1, 1, {4, 4, 4, 4}, "", 0},
      {1, 17, 7, 7, 13, 13, 1, 1, {6, 6, 6, 6}, "", 0},
      // 2x2 stride 2, odd sizes, ceil_mode
      {2, 5, 13, 7, 2, 2, 2, 2, {0, 0, 0, 0}, "", 0},
      {1, 3, 13, 7, 2, 2, 2, 2, {0, 0, 0, 0}, "", 1},
      {1, 3, 7, 13, 3, 3, 2, 2, {1, 0, 0, 1}, "", 1},
      {1, 3, 1, 1, 3, 3, 2, 2, {1, 1, 1, 1}, "", 0},
      {1, 3, 1, 127, 1, 3, 1, 2, {0, 1, 0, 1}, "", 0},
      // asymmetric kernels and pads, auto_pad
      {1, 5, 13, 13, 3, 5, 2, 1, {1, 2, 0, 1}, "", 0},
      {1, 3, 7, 13, 3, 3, 2, 2, {}, "SAME_UPPER", 0},
      {1, 3, 8, 8, 4, 4, 1, 1, {}, "SAME_LOWER", 0},
      {1, 3, 13, 7, 3, 3, 2, 3, {}, "VALID", 0},
  };
  return cases;
}

// Direct float64 pooling: explicit begin pads, windows clipped to the input; average divides by
// the taps inside the input (count_include_pad 0). Max of an all-padding window is -inf.
std::vector<double> direct_pool2d(const PoolCase& c, const Tensor& x, const Shape& out_shape, bool max) {
  std::vector<double> out;
  const float* xs = x.data<float>();
  for (int64_t plane = 0; plane < c.batch * c.channels; ++plane) {
    for (int64_t oy = 0; oy < out_shape[2]; ++oy) {
      for (int64_t ox = 0; ox < out_shape[3]; ++ox) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t count = 0;
        for (int64_t ky = 0; ky < c.kh; ++ky) {
          for (int64_t kx = 0; kx < c.kw; ++kx) {
            const int64_t y = oy * c.stride_h + ky - c.pads[0], xx = ox * c.stride_w + kx - c.pads[1];
            if (y < 0 || y >= c.height || xx < 0 || xx >= c.width) continue;
            const double v = xs[(plane * c.height + y) * c.width + xx];
            best = std::max(best, v);
            sum += v;
            ++count;
          }
        }
        out.push_back(max ? best : sum / static_cast<double>(count));
      }
    }
  }
  return out;
}

Tensor iota_tensor(Shape shape, float first) {
  std::vector<float> values(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = first + static_cast<float>(i);
  return Tensor::from_vector<float>(std::move(shape), values);
}

}  // namespace

TEST_CASE("max_pool: cpu kernel matches the reference on awkward shapes, 1 and 2 threads") {
  ThreadPool pool1(1), pool2(2);
  uint32_t seed = 1;
  for (const PoolCase& c : pool_cases()) {
    INFO(describe(c));
    std::mt19937 rng(seed++);
    const Tensor x = random_tensor(DType::kF32, {c.batch, c.channels, c.height, c.width}, rng);
    const Node node = pool_node(OpKind::kMaxPool, c);
    auto expected = run_op(node, {&x}, true);
    REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool1, &pool2}) {
      auto actual = run_op(node, {&x}, false, pool);
      REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
      REQUIRE(actual->at(0).shape() == expected->at(0).shape());
      CHECK(compare_tensors(actual->at(0), expected->at(0)).max_abs == 0.0);
    }
  }
}

TEST_CASE("max_pool and average_pool: references match a direct float64 loop") {
  uint32_t seed = 50;
  for (const PoolCase& c : pool_cases()) {
    if (!c.auto_pad.empty()) continue;
    INFO(describe(c));
    std::mt19937 rng(seed++);
    const Tensor x = random_tensor(DType::kF32, {c.batch, c.channels, c.height, c.width}, rng);
    for (OpKind op : {OpKind::kMaxPool, OpKind::kAveragePool}) {
      CAPTURE(op_name(op));
      auto out = run_op(pool_node(op, c), {&x}, true);
      REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
      const Shape& shape = out->at(0).shape();
      const Tensor expected = Tensor::from_vector<double>(shape, direct_pool2d(c, x, shape, op == OpKind::kMaxPool));
      CHECK(compare_tensors(out->at(0), expected).relative_l2 <= 1e-6);
    }
  }
}

TEST_CASE("pool: ONNX's documented ceil_mode, pads and count_include_pad examples") {
  const Tensor x = iota_tensor({1, 1, 4, 4}, 1.0f);
  const PoolCase ceil_case{1, 1, 4, 4, 3, 3, 2, 2, {0, 0, 0, 0}, "", 1};
  auto max_out = run_op(pool_node(OpKind::kMaxPool, ceil_case), {&x}, true);
  auto avg_out = run_op(pool_node(OpKind::kAveragePool, ceil_case), {&x}, true);
  REQUIRE(max_out.is_ok());
  REQUIRE(avg_out.is_ok());
  CHECK(compare_tensors(max_out->at(0), Tensor::from_vector<float>({1, 1, 2, 2}, {11, 12, 15, 16})).max_abs == 0);
  CHECK(compare_tensors(avg_out->at(0), Tensor::from_vector<float>({1, 1, 2, 2}, {6, 7.5f, 12, 13.5f})).max_abs == 0);

  // ceil_mode must not create a window that starts in the end padding: 2x2, kernel 1, stride 2.
  const Tensor small = iota_tensor({1, 1, 2, 2}, 1.0f);
  auto reduced = run_op(pool_node(OpKind::kMaxPool, {1, 1, 2, 2, 1, 1, 2, 2, {0, 0, 0, 0}, "", 1}), {&small}, true);
  REQUIRE(reduced.is_ok());
  CHECK(reduced->at(0).shape() == Shape{1, 1, 1, 1});

  // 5x5 input, kernel 3, pads 2, count_include_pad: the corner window covers 1 input of 9 taps.
  const Tensor five = iota_tensor({1, 1, 5, 5}, 1.0f);
  Node include_pad = pool_node(OpKind::kAveragePool, {1, 1, 5, 5, 3, 3, 1, 1, {2, 2, 2, 2}, "", 0});
  include_pad.attrs.set("count_include_pad", int64_t{1});
  auto padded = run_op(include_pad, {&five}, true);
  REQUIRE(padded.is_ok());
  REQUIRE(padded->at(0).shape() == Shape{1, 1, 7, 7});
  CHECK(padded->at(0).data<float>()[0] == doctest::Approx(1.0 / 9.0));
  CHECK(padded->at(0).data<float>()[1] == doctest::Approx((1.0 + 2.0) / 9.0));
  CHECK(padded->at(0).data<float>()[3 * 7 + 3] == doctest::Approx((7 + 8 + 9 + 12 + 13 + 14 + 17 + 18 + 19) / 9.0));
}

TEST_CASE("max_pool: Indices output in row-major and column-major storage order") {
  const Tensor x = iota_tensor({1, 1, 5, 5}, 1.0f);
  Node node = make_node(OpKind::kMaxPool, 1, 2);
  node.attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  node.attrs.set("strides", std::vector<int64_t>{2, 2});
  for (int64_t storage_order : {0, 1}) {
    CAPTURE(storage_order);
    node.attrs.set("storage_order", storage_order);
    for (bool reference : {true, false}) {
      auto out = run_op(node, {&x}, reference);
      REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
      REQUIRE(out->size() == 2);
      CHECK(compare_tensors(out->at(0), Tensor::from_vector<float>({1, 1, 2, 2}, {7, 9, 17, 19})).max_abs == 0);
      const std::vector<int64_t> expected =
          storage_order == 0 ? std::vector<int64_t>{6, 8, 16, 18} : std::vector<int64_t>{6, 16, 8, 18};
      CHECK(out->at(1).to_int64_vector() == expected);
    }
  }
  // Indices count whole-tensor positions: batch 2, channel 3 of 3.
  std::mt19937 rng(9);
  const Tensor batched = random_tensor(DType::kF32, {2, 3, 4, 4}, rng);
  node.attrs.set("storage_order", int64_t{0});
  auto out = run_op(node, {&batched}, true);
  REQUIRE(out.is_ok());
  const std::vector<int64_t> indices = out->at(1).to_int64_vector();
  for (size_t i = 0; i < indices.size(); ++i) {
    CHECK(batched.data<float>()[indices[i]] == out->at(0).data<float>()[i]);
    CHECK(indices[i] / 16 == static_cast<int64_t>(i) / 4);  // inside its own (n, c) plane
  }
}

TEST_CASE("pool: 1-D, 3-D, uint8 and dilated max pools") {
  ThreadPool pool(2);
  std::mt19937 rng(77);
  Node node1 = make_node(OpKind::kMaxPool, 1);
  node1.attrs.set("kernel_shape", std::vector<int64_t>{3});
  node1.attrs.set("strides", std::vector<int64_t>{2});
  node1.attrs.set("pads", std::vector<int64_t>{1, 1});
  const Tensor x1 = random_tensor(DType::kF32, {2, 3, 127}, rng);
  auto ref1 = run_op(node1, {&x1}, true);
  auto cpu1 = run_op(node1, {&x1}, false, &pool);
  REQUIRE(ref1.is_ok());
  REQUIRE(cpu1.is_ok());
  CHECK(ref1->at(0).shape() == Shape{2, 3, 64});
  CHECK(compare_tensors(cpu1->at(0), ref1->at(0)).max_abs == 0);

  Node node3 = make_node(OpKind::kAveragePool, 1);
  node3.attrs.set("kernel_shape", std::vector<int64_t>{2, 2, 2});
  const Tensor x3 = iota_tensor({1, 1, 2, 2, 3}, 0.0f);
  auto avg3 = run_op(node3, {&x3}, true);
  REQUIRE(avg3.is_ok());
  REQUIRE(avg3->at(0).shape() == Shape{1, 1, 1, 1, 2});
  CHECK(avg3->at(0).data<float>()[0] == doctest::Approx((0 + 1 + 3 + 4 + 6 + 7 + 9 + 10) / 8.0));

  Node node_u8 = make_node(OpKind::kMaxPool, 1);
  node_u8.attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  const Tensor xu8 = Tensor::from_vector<uint8_t>({1, 1, 2, 3}, {1, 200, 3, 4, 5, 255});
  auto u8 = run_op(node_u8, {&xu8}, false);
  REQUIRE(u8.is_ok());
  CHECK(u8->at(0).to_int64_vector() == std::vector<int64_t>{200, 255});

  Node dilated = make_node(OpKind::kMaxPool, 1);
  dilated.attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  dilated.attrs.set("dilations", std::vector<int64_t>{2, 2});
  const Tensor x4 = iota_tensor({1, 1, 4, 4}, 1.0f);
  auto d = run_op(dilated, {&x4}, false, &pool);
  REQUIRE(d.is_ok());
  CHECK(compare_tensors(d->at(0), Tensor::from_vector<float>({1, 1, 2, 2}, {11, 12, 15, 16})).max_abs == 0);
}

TEST_CASE("global_average_pool: mean over every spatial position per (n, c)") {
  std::mt19937 rng(11);
  const Tensor x = random_tensor(DType::kF32, {2, 3, 5, 7}, rng);
  auto out = run_op(make_node(OpKind::kGlobalAveragePool, 1), {&x}, true);
  REQUIRE(out.is_ok());
  REQUIRE(out->at(0).shape() == Shape{2, 3, 1, 1});
  for (int64_t plane = 0; plane < 6; ++plane) {
    double sum = 0;
    for (int64_t i = 0; i < 35; ++i) sum += x.data<float>()[plane * 35 + i];
    CHECK(out->at(0).data<float>()[plane] == doctest::Approx(sum / 35.0).epsilon(1e-6));
  }
}

TEST_CASE("pool: shape rule errors") {
  std::vector<TensorDesc> out;
  const Tensor x = Tensor::meta(DType::kF32, {1, 3, 8, 8});
  const std::vector<const Tensor*> inputs = {&x};
  Node node = make_node(OpKind::kMaxPool, 1);
  CHECK(infer_pool(node, inputs, out).message() == "kernel_shape attribute is required");
  node.attrs.set("kernel_shape", std::vector<int64_t>{3});
  CHECK(infer_pool(node, inputs, out).message().find("kernel_shape has 1 entries") != std::string::npos);
  node.attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  node.attrs.set("strides", std::vector<int64_t>{0, 1});
  CHECK(infer_pool(node, inputs, out).message() == "strides[0] is 0, expected >= 1");
  const Tensor rank2 = Tensor::meta(DType::kF32, {3, 8});
  CHECK(infer_global_average_pool(node, std::vector<const Tensor*>{&rank2}, out).message().find("rank 2") !=
        std::string::npos);
  const Tensor ints = Tensor::meta(DType::kI32, {1, 3, 8, 8});
  Node avg = make_node(OpKind::kAveragePool, 1);
  avg.attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  CHECK(infer_pool(avg, std::vector<const Tensor*>{&ints}, out).code() == StatusCode::kUnsupported);
}
