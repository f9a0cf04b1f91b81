// Reshape, Flatten, Squeeze, Unsqueeze, Identity (copy_input), Shape, ConstantOfShape, Constant.
#include <doctest/doctest.h>

#include <string>

#include "runtime/ops/ops.h"
#include "tests/ops/naive_index.h"
#include "tests/ops/op_test_util.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

Tensor i64s(std::vector<int64_t> values) {
  const auto n = static_cast<int64_t>(values.size());
  return Tensor::from_vector<int64_t>({n}, values);
}

Tensor iota_f32(Shape shape) {
  Tensor t = Tensor::empty(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

Result<Shape> out_shape(const Node& node, const std::vector<const Tensor*>& inputs) {
  std::vector<TensorDesc> descs;
  EF_RETURN_IF_ERROR(infer_node(node, inputs, descs));
  return descs.at(0).shape;
}

Shape shape_or_fail(const Node& node, const std::vector<const Tensor*>& inputs) {
  auto shape = out_shape(node, inputs);
  REQUIRE_MESSAGE(shape.is_ok(), shape.status().to_string());
  return *shape;
}

}  // namespace

TEST_CASE("reshape: zero copies a dim, -1 is inferred, allowzero keeps zeros") {
  const Tensor data = iota_f32({2, 3, 4});
  const Node node = make_node(OpKind::kReshape, 2);
  const Tensor s1 = i64s({4, -1}), s2 = i64s({0, -1}), s3 = i64s({2, 0, 2, 2}), s4 = i64s({-1});
  CHECK(shape_or_fail(node, {&data, &s1}) == Shape{4, 6});
  CHECK(shape_or_fail(node, {&data, &s2}) == Shape{2, 12});
  CHECK(shape_or_fail(node, {&data, &s3}) == Shape{2, 3, 2, 2});
  CHECK(shape_or_fail(node, {&data, &s4}) == Shape{24});
  const Tensor i32_shape = Tensor::from_vector<int32_t>({2}, {6, 4});
  CHECK(shape_or_fail(node, {&data, &i32_shape}) == Shape{6, 4});

  Node allow_zero = make_node(OpKind::kReshape, 2);
  allow_zero.attrs.set("allowzero", int64_t{1});
  const Tensor empty = Tensor::empty(DType::kF32, {0, 3});
  const Tensor zero_shape = i64s({3, 0});
  CHECK(shape_or_fail(allow_zero, {&empty, &zero_shape}) == Shape{3, 0});
  CHECK_FALSE(out_shape(allow_zero, {&data, &zero_shape}).is_ok());

  auto result = run_op(node, {&data, &s1}, true);
  REQUIRE(result.is_ok());
  CHECK(identical((*result)[0], data.reshaped({4, 6})));
}

TEST_CASE("reshape: errors") {
  const Tensor data = iota_f32({2, 3});
  const Node node = make_node(OpKind::kReshape, 2);
  const Tensor bad = i64s({4, -1});
  const Status status = out_shape(node, {&data, &bad}).status();
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(status.message().find("cannot reshape [2, 3] (6 elements) to [4, -1]") != std::string::npos);
  const Tensor two_inferred = i64s({-1, -1}), negative = i64s({-2, -3}), copy_past_rank = i64s({1, 1, 0});
  const Tensor overflow = i64s({INT64_MAX, INT64_MAX, 0, -1}), too_many = i64s({7});
  CHECK(out_shape(node, {&data, &two_inferred}).status().code() == StatusCode::kInvalidArgument);
  CHECK(out_shape(node, {&data, &negative}).status().code() == StatusCode::kInvalidArgument);
  CHECK(out_shape(node, {&data, &copy_past_rank}).status().code() == StatusCode::kInvalidArgument);
  CHECK(out_shape(node, {&data, &overflow}).status().code() == StatusCode::kInvalidArgument);
  CHECK(out_shape(node, {&data, &too_many}).status().code() == StatusCode::kInvalidArgument);
  const Tensor meta = Tensor::meta(DType::kI64, {2});
  const Status not_constant = out_shape(node, {&data, &meta}).status();
  CHECK(not_constant.code() == StatusCode::kUnsupported);
  CHECK(not_constant.message().find("shape must be a constant") != std::string::npos);
}

TEST_CASE("flatten: every axis, negative axes") {
  const Tensor data = iota_f32({2, 3, 4, 5});
  const Shape expected[] = {{1, 120}, {2, 60}, {6, 20}, {24, 5}, {120, 1}};
  for (int64_t axis = -4; axis <= 4; ++axis) {
    Node node = make_node(OpKind::kFlatten, 1);
    node.attrs.set("axis", axis);
    CHECK(shape_or_fail(node, {&data}) == expected[axis < 0 ? axis + 4 : axis]);
  }
  CHECK(shape_or_fail(make_node(OpKind::kFlatten, 1), {&data}) == Shape{2, 60});
  Node bad = make_node(OpKind::kFlatten, 1);
  bad.attrs.set("axis", int64_t{5});
  CHECK(out_shape(bad, {&data}).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("squeeze: all unit dims, listed axes, errors") {
  const Tensor data = iota_f32({1, 3, 1, 5});
  CHECK(shape_or_fail(make_node(OpKind::kSqueeze, 1), {&data}) == Shape{3, 5});
  const Node node = make_node(OpKind::kSqueeze, 2);
  const Tensor axes = i64s({-2}), not_one = i64s({1}), repeated = i64s({0, -4}), out_of_range = i64s({4});
  CHECK(shape_or_fail(node, {&data, &axes}) == Shape{1, 3, 5});
  CHECK(shape_or_fail(node, {&data, nullptr}) == Shape{3, 5});
  CHECK(out_shape(node, {&data, &not_one}).status().code() == StatusCode::kInvalidArgument);
  CHECK(out_shape(node, {&data, &repeated}).status().code() == StatusCode::kInvalidArgument);
  CHECK(out_shape(node, {&data, &out_of_range}).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("unsqueeze: axes in output rank, unsorted and negative, errors") {
  const Tensor data = iota_f32({3, 4, 5});
  const Node node = make_node(OpKind::kUnsqueeze, 2);
  const Tensor two = i64s({0, 4}), unsorted = i64s({5, 4, 2}), negative = i64s({-1}), three = i64s({2, 0, 1});
  CHECK(shape_or_fail(node, {&data, &two}) == Shape{1, 3, 4, 5, 1});
  CHECK(shape_or_fail(node, {&data, &unsorted}) == Shape{3, 4, 1, 5, 1, 1});
  CHECK(shape_or_fail(node, {&data, &negative}) == Shape{3, 4, 5, 1});
  CHECK(shape_or_fail(node, {&data, &three}) == Shape{1, 1, 1, 3, 4, 5});
  const Tensor repeated = i64s({1, 1}), out_of_range = i64s({5}), negative_range = i64s({-5});
  CHECK(out_shape(node, {&data, &repeated}).status().code() == StatusCode::kInvalidArgument);
  CHECK(out_shape(node, {&data, &out_of_range}).status().code() == StatusCode::kInvalidArgument);
  CHECK(out_shape(node, {&data, &negative_range}).status().code() == StatusCode::kInvalidArgument);
  CHECK_FALSE(out_shape(node, {&data, nullptr}).is_ok());
  auto result = run_op(node, {&data, &two}, true);
  REQUIRE(result.is_ok());
  CHECK(identical((*result)[0], data.reshaped({1, 3, 4, 5, 1})));
}

TEST_CASE("identity copies bytes of every dtype") {
  for (DType dtype : {DType::kU8, DType::kF16, DType::kI64, DType::kBool}) {
    Tensor data = Tensor::empty(dtype, {3, 2});
    auto* bytes = static_cast<unsigned char*>(data.raw_data());
    for (size_t i = 0; i < data.nbytes(); ++i) bytes[i] = static_cast<unsigned char>(i % 2);
    auto result = run_op(make_node(OpKind::kIdentity, 1), {&data}, true);
    REQUIRE(result.is_ok());
    CHECK(identical((*result)[0], data));
  }
}

TEST_CASE("shape: dims, with opset-15 start and end clamped") {
  const Tensor data = Tensor::meta(DType::kF32, {3, 4, 5});
  const auto run_shape = [&](std::optional<int64_t> start, std::optional<int64_t> end) {
    Node node = make_node(OpKind::kShape, 1);
    if (start) node.attrs.set("start", *start);
    if (end) node.attrs.set("end", *end);
    const Tensor real = Tensor::empty(DType::kF32, {3, 4, 5});
    auto result = run_op(node, {&real}, true);
    REQUIRE(result.is_ok());
    const Tensor& out = (*result)[0];
    REQUIRE(out.dtype() == DType::kI64);
    return std::vector<int64_t>(out.values<int64_t>().begin(), out.values<int64_t>().end());
  };
  CHECK(run_shape({}, {}) == std::vector<int64_t>{3, 4, 5});
  CHECK(run_shape(1, {}) == std::vector<int64_t>{4, 5});
  CHECK(run_shape({}, 1) == std::vector<int64_t>{3});
  CHECK(run_shape(-1, {}) == std::vector<int64_t>{5});
  CHECK(run_shape({}, -1) == std::vector<int64_t>{3, 4});
  CHECK(run_shape(1, 2) == std::vector<int64_t>{4});
  CHECK(run_shape(-10, 10) == std::vector<int64_t>{3, 4, 5});
  CHECK(run_shape(2, 1).empty());
  // Shape needs no data, only the description.
  CHECK(shape_or_fail(make_node(OpKind::kShape, 1), {&data}) == Shape{3});
}

TEST_CASE("constant_of_shape: default f32 zero, typed value, errors") {
  const Tensor shape = i64s({2, 3});
  auto result = run_op(make_node(OpKind::kConstantOfShape, 1), {&shape}, true);
  REQUIRE(result.is_ok());
  CHECK(identical((*result)[0], Tensor::zeros(DType::kF32, {2, 3})));

  Node node = make_node(OpKind::kConstantOfShape, 1);
  node.attrs.set("value", Tensor::from_vector<int32_t>({1}, {7}));
  result = run_op(node, {&shape}, true);
  REQUIRE(result.is_ok());
  CHECK(identical((*result)[0], Tensor::from_vector<int32_t>({2, 3}, {7, 7, 7, 7, 7, 7})));
  const Tensor scalar_shape = i64s({});
  result = run_op(node, {&scalar_shape}, true);
  REQUIRE(result.is_ok());
  CHECK(identical((*result)[0], Tensor::scalar<int32_t>(7)));
  const Tensor zero = i64s({0, 4});
  result = run_op(node, {&zero}, true);
  REQUIRE(result.is_ok());
  CHECK((*result)[0].shape() == Shape{0, 4});

  const Tensor negative = i64s({2, -1}), huge = i64s({INT64_MAX, INT64_MAX});
  CHECK(run_op(node, {&negative}, true).status().code() == StatusCode::kInvalidArgument);
  CHECK(run_op(node, {&huge}, true).status().code() == StatusCode::kInvalidArgument);
  const Tensor meta = Tensor::meta(DType::kI64, {2});
  CHECK(run_op(node, {&meta}, true).status().code() == StatusCode::kUnsupported);
  node.attrs.set("value", Tensor::from_vector<float>({2}, {1, 2}));
  CHECK(run_op(node, {&shape}, true).status().code() == StatusCode::kInvalidModel);
}

TEST_CASE("constant: every value attribute kind, and exactly one required") {
  const auto run_constant = [](const Node& node) {
    auto result = run_op(node, {}, true);
    REQUIRE_MESSAGE(result.is_ok(), result.status().to_string());
    return (*result)[0];
  };
  Node node = make_node(OpKind::kConstant, 0);
  const Tensor value = Tensor::from_vector<uint8_t>({2, 2}, {1, 2, 3, 4});
  node.attrs.set("value", value);
  CHECK(identical(run_constant(node), value));
  node = make_node(OpKind::kConstant, 0);
  node.attrs.set("value_float", 2.5f);
  CHECK(identical(run_constant(node), Tensor::scalar<float>(2.5f)));
  node = make_node(OpKind::kConstant, 0);
  node.attrs.set("value_floats", std::vector<float>{1, 2});
  CHECK(identical(run_constant(node), Tensor::from_vector<float>({2}, {1, 2})));
  node = make_node(OpKind::kConstant, 0);
  node.attrs.set("value_int", int64_t{-4});
  CHECK(identical(run_constant(node), Tensor::scalar<int64_t>(-4)));
  node = make_node(OpKind::kConstant, 0);
  node.attrs.set("value_ints", std::vector<int64_t>{5, 6, 7});
  CHECK(identical(run_constant(node), i64s({5, 6, 7})));
  node.attrs.set("value_int", int64_t{1});
  CHECK(run_op(node, {}, true).status().code() == StatusCode::kInvalidModel);
  CHECK(run_op(make_node(OpKind::kConstant, 0), {}, true).status().code() == StatusCode::kInvalidModel);
}
