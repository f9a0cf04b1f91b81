// Malformed and hostile models: each must give a clear Status naming the problem, never crash.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "tests/onnx/onnx_test_models.h"
#include "tests/support/assets.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

constexpr int64_t kHuge = int64_t{1} << 32;

// x[1,3,8,8] -> Conv(W[4,3,3,3]) -> y: a valid model to corrupt.
OnnxModelBuilder conv_model() {
  OnnxModelBuilder m(13);
  m.input("x", {1, 3, 8, 8});
  m.initializer("W", {4, 3, 3, 3}, std::vector<float>(4 * 3 * 3 * 3, 0.5f));
  m.node("Conv", {"x", "W"}, {"y"}, "conv0");
  m.output("y");
  return m;
}

OnnxModelBuilder relu_model() {
  OnnxModelBuilder m(13);
  m.input("x", {2, 3});
  m.node("Relu", {"x"}, {"y"}, "relu0");
  m.output("y");
  return m;
}

}  // namespace

TEST_CASE("bad model: the valid base models import") {
  CHECK(import_model(conv_model()).is_ok());
  CHECK(import_model(relu_model()).is_ok());
}

TEST_CASE("bad model: empty file") {
  TempDir dir;
  CHECK_IMPORT_ERROR(import_onnx_file(dir.write("empty.onnx", "").string()), StatusCode::kInvalidModel, "empty");
  CHECK_IMPORT_ERROR(import_onnx_bytes("", ""), StatusCode::kInvalidModel, "empty");
}

TEST_CASE("bad model: missing file") {
  CHECK_IMPORT_ERROR(import_onnx_file("/nonexistent/model.onnx"), StatusCode::kIoError, "does not exist");
}

TEST_CASE("bad model: truncated file (first half of a built model)") {
  const std::string bytes = conv_model().bytes();
  const std::string half = bytes.substr(0, bytes.size() / 2);
  CHECK_IMPORT_ERROR(import_onnx_bytes(half, ""), StatusCode::kInvalidModel, "ONNX model");
}

TEST_CASE("bad model: truncated real model (first half of YOLOX-nano)") {
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  TempDir dir;
  std::string bytes(std::filesystem::file_size(path), '\0');
  std::ifstream(path, std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const auto file = dir.write("half.onnx", bytes.substr(0, bytes.size() / 2));
  CHECK_IMPORT_ERROR(import_onnx_file(file.string()), StatusCode::kInvalidModel, "ONNX model");
}

TEST_CASE("bad model: random bytes and a text file are not ONNX") {
  std::mt19937 rng(7);
  std::string noise(4096, '\0');
  for (char& c : noise) c = static_cast<char>(rng() & 0xFF);
  CHECK_IMPORT_ERROR(import_onnx_bytes(noise, ""), StatusCode::kInvalidModel, "ONNX model");
  TempDir dir;
  const auto text = dir.write("notes.onnx", "This is a text file, not a model.\nSecond line.\n");
  CHECK_IMPORT_ERROR(import_onnx_file(text.string()), StatusCode::kInvalidModel, "ONNX model");
}

TEST_CASE("bad model: a file over 2 GiB is refused before reading") {
  TempDir dir;
  const auto file = dir.write("huge.onnx", "");
  std::error_code error;
  std::filesystem::resize_file(file, (uint64_t{2} << 30) + 1, error);  // sparse: no disk used
  if (error) {
    MESSAGE("SKIPPED: cannot create a sparse file: " << error.message());
    return;
  }
  CHECK_IMPORT_ERROR(import_onnx_file(file.string()), StatusCode::kInvalidModel, "2 GiB");
}

TEST_CASE("bad model: missing graph, IR version or opset") {
  OnnxModelBuilder no_graph = relu_model();
  no_graph.model().clear_graph();
  CHECK_IMPORT_ERROR(import_model(no_graph), StatusCode::kInvalidModel, "no graph");
  OnnxModelBuilder no_ir = relu_model();
  no_ir.model().clear_ir_version();
  CHECK_IMPORT_ERROR(import_model(no_ir), StatusCode::kInvalidModel, "ir_version");
  OnnxModelBuilder too_old(6);  // Add-6 had a broadcast attribute: not converted
  too_old.input("x", {2, 3});
  too_old.node("Add", {"x", "x"}, {"y"}, "add0");
  too_old.output("y");
  CHECK_IMPORT_ERROR(import_model(too_old), StatusCode::kUnsupported,
                     "node 'add0' (Add, index 0): opset 6 is not supported for this op (oldest: 7)");
  OnnxModelBuilder too_new = relu_model();
  too_new.model().mutable_opset_import(0)->set_version(19);
  CHECK_IMPORT_ERROR(import_model(too_new), StatusCode::kUnsupported, "opset 19");
}

TEST_CASE("bad model: unknown op and foreign domain name the node") {
  OnnxModelBuilder m(13);
  m.input("x", {2, 3});
  m.node("Relu", {"x"}, {"a"}, "relu0");
  m.node("Foo", {"a"}, {"y"}, "foo1");
  m.output("y");
  CHECK_IMPORT_ERROR(import_model(m), StatusCode::kUnsupported, "node 'foo1' (index 1): op 'Foo' is not supported");

  OnnxModelBuilder d = relu_model();
  d.graph().mutable_node(0)->set_domain("com.microsoft");
  CHECK_IMPORT_ERROR(import_model(d), StatusCode::kUnsupported, "com.microsoft.Relu");

  OnnxModelBuilder unnamed(13);
  unnamed.input("x", {2, 3});
  unnamed.node("Bar", {"x"}, {"y"});
  unnamed.output("y");
  CHECK_IMPORT_ERROR(import_model(unnamed), StatusCode::kUnsupported, "node 'Bar_0' (index 0)");
}

TEST_CASE("bad model: undefined input (missing initializer)") {
  OnnxModelBuilder m = conv_model();
  m.graph().clear_initializer();
  CHECK_IMPORT_ERROR(import_model(m), StatusCode::kInvalidModel,
                     "node 'conv0' (Conv, index 0): input 'W' is not defined");
}

TEST_CASE("bad model: a value defined twice") {
  OnnxModelBuilder m(13);
  m.input("x", {2, 3});
  m.node("Relu", {"x"}, {"y"}, "first");
  m.node("Sigmoid", {"x"}, {"y"}, "second");
  m.output("y");
  CHECK_IMPORT_ERROR(import_model(m), StatusCode::kInvalidModel, "output 'y' is already produced");

  OnnxModelBuilder shadow(13);
  shadow.input("x", {2, 3});
  shadow.node("Relu", {"x"}, {"x"}, "relu_in_place");
  shadow.output("x");
  CHECK_IMPORT_ERROR(import_model(shadow), StatusCode::kInvalidModel, "output 'x' is already defined");
}

TEST_CASE("bad model: nodes out of topological order") {
  OnnxModelBuilder m(13);
  m.input("x", {2, 3});
  m.node("Relu", {"a"}, {"y"}, "late_user");
  m.node("Sigmoid", {"x"}, {"a"}, "producer");
  m.output("y");
  CHECK_IMPORT_ERROR(import_model(m), StatusCode::kInvalidModel, "node 'late_user' (Relu, index 0)");
  CHECK_IMPORT_ERROR(import_model(m), StatusCode::kInvalidModel, "not topologically sorted");
}

TEST_CASE("bad model: graph output never produced") {
  OnnxModelBuilder m = relu_model();
  m.output("ghost");
  CHECK_IMPORT_ERROR(import_model(m), StatusCode::kInvalidModel, "graph output 'ghost'");
}

TEST_CASE("bad model: Conv weight of rank 2 is caught at import") {
  OnnxModelBuilder m(13);
  m.input("x", {1, 3, 8, 8});
  m.initializer("W", {4, 3}, std::vector<float>(12, 1.0f));
  m.node("Conv", {"x", "W"}, {"y"}, "conv0");
  m.output("y");
  CHECK_IMPORT_ERROR(import_model(m), StatusCode::kInvalidModel,
                     "node 'conv0' (Conv, index 0): weight W must have rank");
  CHECK_IMPORT_ERROR(import_model(m, {.run_checker = false, .run_shape_inference = false}), StatusCode::kInvalidModel,
                     "weight W must have rank");
}

TEST_CASE("bad model: negative and overflowing dims") {
  OnnxModelBuilder negative = relu_model();
  negative.initializer("bad", {-2, 3}, {});
  CHECK_IMPORT_ERROR(import_model(negative), StatusCode::kInvalidModel, "negative dimension");

  OnnxModelBuilder overflow = relu_model();
  overflow.initializer("bad", {kHuge, kHuge}, {});
  CHECK_IMPORT_ERROR(import_model(overflow), StatusCode::kInvalidModel, "too large");

  OnnxModelBuilder input_overflow(13);
  input_overflow.input("x", {kHuge, kHuge});
  input_overflow.node("Relu", {"x"}, {"y"});
  input_overflow.output("y");
  CHECK_IMPORT_ERROR(import_model(input_overflow), StatusCode::kInvalidModel, "too large");

  OnnxModelBuilder value_info_negative = relu_model();
  onnx::ValueInfoProto* info = value_info_negative.graph().add_value_info();
  info->set_name("y");
  info->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  info->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(-5);
  CHECK_IMPORT_ERROR(import_model(value_info_negative), StatusCode::kInvalidModel, "negative dimension -5");
}

TEST_CASE("bad model: data size does not match dims") {
  OnnxModelBuilder raw = relu_model();
  onnx::TensorProto* t = raw.graph().add_initializer();
  t->set_name("raw");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(2);
  t->add_dims(2);
  t->set_raw_data(std::string(12, '\0'));
  CHECK_IMPORT_ERROR(import_model(raw), StatusCode::kInvalidModel, "raw_data has 12 bytes");

  OnnxModelBuilder typed = relu_model();
  typed.initializer("typed", {2, 2}, {1.0f, 2.0f, 3.0f});
  CHECK_IMPORT_ERROR(import_model(typed), StatusCode::kInvalidModel, "tensor 'typed': has 3 values");

  OnnxModelBuilder no_data = relu_model();
  no_data.initializer("empty", {1000000, 1000}, {});
  CHECK_IMPORT_ERROR(import_model(no_data), StatusCode::kInvalidModel, "has 0 values");
}

TEST_CASE("bad model: attribute values are validated before any allocation") {
  OnnxModelBuilder zero_stride = conv_model();
  set_ints(zero_stride.graph().mutable_node(0), "strides", {0, 1});
  CHECK_IMPORT_ERROR(import_model(zero_stride), StatusCode::kInvalidModel,
                     "node 'conv0' (Conv, index 0): attribute 'strides' must be positive, got [0, 1]");

  OnnxModelBuilder huge_kernel(13);
  huge_kernel.input("x", {1, 3, 8, 8});
  onnx::NodeProto* pool = huge_kernel.node("MaxPool", {"x"}, {"y"}, "pool0");
  set_ints(pool, "kernel_shape", {int64_t{1} << 40, int64_t{1} << 40});
  huge_kernel.output("y");
  CHECK_IMPORT_ERROR(import_model(huge_kernel), StatusCode::kInvalidModel, "too large");

  OnnxModelBuilder short_pads = conv_model();
  set_ints(short_pads.graph().mutable_node(0), "pads", {1, 1});
  CHECK_IMPORT_ERROR(import_model(short_pads), StatusCode::kInvalidModel, "attribute 'pads' has 2 values, expected 4");

  OnnxModelBuilder negative_pads = conv_model();
  set_ints(negative_pads.graph().mutable_node(0), "pads", {1, -1, 1, 1});
  CHECK_IMPORT_ERROR(import_model(negative_pads), StatusCode::kInvalidModel, "must be non-negative");

  OnnxModelBuilder zero_group = conv_model();
  set_int(zero_group.graph().mutable_node(0), "group", 0);
  CHECK_IMPORT_ERROR(import_model(zero_group), StatusCode::kInvalidModel, "attribute 'group' must be >= 1");

  OnnxModelBuilder kernel_mismatch = conv_model();
  set_ints(kernel_mismatch.graph().mutable_node(0), "kernel_shape", {5, 5});
  CHECK_IMPORT_ERROR(import_model(kernel_mismatch), StatusCode::kInvalidModel, "does not match weight shape");

  OnnxModelBuilder wrong_kind = conv_model();
  set_int(wrong_kind.graph().mutable_node(0), "strides", 2);
  CHECK_IMPORT_ERROR(import_model(wrong_kind), StatusCode::kInvalidModel, "attribute 'strides' must be ints, got int");

  OnnxModelBuilder twice = conv_model();
  set_int(twice.graph().mutable_node(0), "group", 1);
  set_int(twice.graph().mutable_node(0), "group", 1);
  CHECK_IMPORT_ERROR(import_model(twice), StatusCode::kInvalidModel, "given more than once");

  OnnxModelBuilder bad_axis(13);
  bad_axis.input("x", {2, 3});
  set_int(bad_axis.node("Softmax", {"x"}, {"y"}, "sm"), "axis", 5);
  bad_axis.output("y");
  CHECK_IMPORT_ERROR(import_model(bad_axis), StatusCode::kInvalidModel, "out of range for rank 2");

  OnnxModelBuilder bad_cast(13);
  bad_cast.input("x", {2, 3});
  set_int(bad_cast.node("Cast", {"x"}, {"y"}, "cast0"), "to", onnx::TensorProto::BFLOAT16);
  bad_cast.output("y", onnx::TensorProto::BFLOAT16);
  CHECK_IMPORT_ERROR(import_model(bad_cast), StatusCode::kUnsupported, "Cast to BFLOAT16 is not supported");

  OnnxModelBuilder bad_perm(13);
  bad_perm.input("x", {2, 3});
  set_ints(bad_perm.node("Transpose", {"x"}, {"y"}, "t"), "perm", {0, 0});
  bad_perm.output("y");
  CHECK_IMPORT_ERROR(import_model(bad_perm), StatusCode::kInvalidModel, "not a permutation");
}

TEST_CASE("bad model: unsupported attribute values and unknown attributes") {
  OnnxModelBuilder m(13);
  m.input("x", {1, 1, 4, 4});
  onnx::NodeProto* pad = m.node("Pad", {"x", "pads"}, {"y"}, "pad0");
  m.initializer_i64("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  set_string(pad, "mode", "wrap");
  m.output("y");
  CHECK_IMPORT_ERROR(import_model(m, {.run_checker = false}), StatusCode::kUnsupported, "wrap");

  OnnxModelBuilder unknown_attr = relu_model();
  set_int(unknown_attr.graph().mutable_node(0), "mystery", 3);
  CHECK_IMPORT_ERROR(import_model(unknown_attr, {.run_checker = false}), StatusCode::kUnsupported,
                     "attribute 'mystery' is not supported");

  OnnxModelBuilder string_input(13);
  string_input.input("x", {2}, onnx::TensorProto::STRING);
  string_input.node("Identity", {"x"}, {"y"});
  string_input.output("y", onnx::TensorProto::STRING);
  CHECK_IMPORT_ERROR(import_model(string_input), StatusCode::kUnsupported, "element type STRING is not supported");
}

TEST_CASE("bad model: ONNX checker and shape inference failures become Status") {
  OnnxModelBuilder deprecated(13);  // Upsample is deprecated since opset 10: only ONNX's checker knows
  deprecated.input("x", {1, 1, 2, 2});
  deprecated.initializer("scales", {4}, {1, 1, 2, 2});
  deprecated.node("Upsample", {"x", "scales"}, {"y"}, "up");
  deprecated.output("y");
  CHECK_IMPORT_ERROR(import_model(deprecated), StatusCode::kInvalidModel, "ONNX checker");

  OnnxModelBuilder mismatch(13);
  mismatch.input("a", {2, 3});
  mismatch.input("b", {4, 5});
  mismatch.node("Add", {"a", "b"}, {"y"}, "add0");
  mismatch.output("y", onnx::TensorProto::FLOAT, {2, 3});
  CHECK_IMPORT_ERROR(import_model(mismatch), StatusCode::kInvalidModel, "ONNX shape inference");
}
