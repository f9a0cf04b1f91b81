// TensorProto -> Tensor for every supported element type, from typed fields and raw bytes.
#include "models/onnx/tensor_proto.h"

#include <doctest/doctest.h>

#include <cstring>

#include "tests/onnx/onnx_test_models.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {
onnx::TensorProto make_proto(int32_t type, const std::vector<int64_t>& dims) {
  onnx::TensorProto proto;
  proto.set_name("t");
  proto.set_data_type(type);
  for (int64_t d : dims) proto.add_dims(d);
  return proto;
}
}  // namespace

TEST_CASE("tensor_proto: typed fields of each element type") {
  onnx::TensorProto f = make_proto(onnx::TensorProto::FLOAT, {2});
  f.add_float_data(1.5f);
  f.add_float_data(-2.0f);
  Result<Tensor> tf = tensor_from_proto(f, "");
  REQUIRE(tf.is_ok());
  CHECK(tf->dtype() == DType::kF32);
  CHECK(tf->values<float>()[1] == -2.0f);

  onnx::TensorProto i8 = make_proto(onnx::TensorProto::INT8, {3});
  for (int v : {-128, 0, 127}) i8.add_int32_data(v);
  Result<Tensor> ti8 = tensor_from_proto(i8, "");
  REQUIRE(ti8.is_ok());
  CHECK(ti8->values<int8_t>()[0] == -128);

  onnx::TensorProto b = make_proto(onnx::TensorProto::BOOL, {2});
  b.add_int32_data(0);
  b.add_int32_data(5);
  Result<Tensor> tb = tensor_from_proto(b, "");
  REQUIRE(tb.is_ok());
  CHECK(tb->values<bool>()[1] == true);

  onnx::TensorProto h = make_proto(onnx::TensorProto::FLOAT16, {1});
  h.add_int32_data(0x3C00);  // 1.0
  Result<Tensor> th = tensor_from_proto(h, "");
  REQUIRE(th.is_ok());
  CHECK(half_to_float(th->values<Half>()[0]) == 1.0f);

  onnx::TensorProto i64 = make_proto(onnx::TensorProto::INT64, {});
  i64.add_int64_data(int64_t{1} << 40);
  Result<Tensor> ti64 = tensor_from_proto(i64, "");
  REQUIRE(ti64.is_ok());
  CHECK(ti64->rank() == 0);
  CHECK(ti64->int_at(0) == int64_t{1} << 40);

  onnx::TensorProto d = make_proto(onnx::TensorProto::DOUBLE, {1});
  d.add_double_data(0.25);
  Result<Tensor> td = tensor_from_proto(d, "");
  REQUIRE(td.is_ok());
  CHECK(td->values<double>()[0] == 0.25);
}

TEST_CASE("tensor_proto: raw little-endian bytes") {
  onnx::TensorProto p = make_proto(onnx::TensorProto::INT32, {2, 2});
  const int32_t values[] = {1, -2, 3, 1 << 30};
  p.set_raw_data(std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  Result<Tensor> t = tensor_from_proto(p, "");
  REQUIRE(t.is_ok());
  CHECK(t->shape() == Shape{2, 2});
  CHECK(t->values<int32_t>()[3] == 1 << 30);

  onnx::TensorProto empty = make_proto(onnx::TensorProto::FLOAT, {0, 3});
  Result<Tensor> te = tensor_from_proto(empty, "");
  REQUIRE(te.is_ok());
  CHECK(te->numel() == 0);
}

TEST_CASE("tensor_proto: malformed tensors") {
  onnx::TensorProto out_of_range = make_proto(onnx::TensorProto::UINT8, {1});
  out_of_range.add_int32_data(300);
  CHECK_IMPORT_ERROR(tensor_from_proto(out_of_range, ""), StatusCode::kInvalidModel, "does not fit");

  onnx::TensorProto wrong_field = make_proto(onnx::TensorProto::FLOAT, {1});
  wrong_field.add_int64_data(1);
  CHECK_IMPORT_ERROR(tensor_from_proto(wrong_field, ""), StatusCode::kInvalidModel, "does not match its element type");

  onnx::TensorProto two_sources = make_proto(onnx::TensorProto::FLOAT, {1});
  two_sources.add_float_data(1.0f);
  two_sources.set_raw_data(std::string(4, '\0'));
  CHECK_IMPORT_ERROR(tensor_from_proto(two_sources, ""), StatusCode::kInvalidModel, "more than one data source");

  onnx::TensorProto bf16 = make_proto(onnx::TensorProto::BFLOAT16, {1});
  bf16.add_int32_data(0);
  CHECK_IMPORT_ERROR(tensor_from_proto(bf16, ""), StatusCode::kUnsupported, "BFLOAT16");

  onnx::TensorProto bad_half = make_proto(onnx::TensorProto::FLOAT16, {1});
  bad_half.add_int32_data(70000);
  CHECK_IMPORT_ERROR(tensor_from_proto(bad_half, ""), StatusCode::kInvalidModel, "float16 bits");
}
