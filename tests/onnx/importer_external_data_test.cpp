// External tensor data: valid data inside the model folder loads; every way out of the folder or
// past the end of the file is refused.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>

#include "tests/onnx/onnx_test_models.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

// x[4] + w[4] where w lives in an external file; `location`, `offset` and `length` as given.
OnnxModelBuilder external_model(const std::string& location, const std::string& offset = "",
                                const std::string& length = "") {
  OnnxModelBuilder m(13);
  m.input("x", {4});
  onnx::TensorProto* w = m.graph().add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add_entry = [&](const std::string& key, const std::string& value) {
    onnx::StringStringEntryProto* entry = w->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add_entry("location", location);
  if (!offset.empty()) add_entry("offset", offset);
  if (!length.empty()) add_entry("length", length);
  m.node("Add", {"x", "w"}, {"y"}, "add0");
  m.output("y", onnx::TensorProto::FLOAT, {4});
  return m;
}

std::string float_bytes(const std::vector<float>& values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Writes the model next to `weights.bin` (8 padding bytes, then 4 floats) and imports it.
Result<std::shared_ptr<Graph>> import_with_weights(const TempDir& dir, const OnnxModelBuilder& m) {
  dir.write("weights.bin", std::string(8, 'p') + float_bytes({1.0f, 2.0f, 3.0f, 4.0f}));
  return import_onnx_file(dir.write("model.onnx", m.bytes()).string());
}

}  // namespace

TEST_CASE("external data: valid data inside the model folder loads") {
  TempDir dir;
  auto graph = import_with_weights(dir, external_model("weights.bin", "8", "16"));
  REQUIRE_MESSAGE(graph.is_ok(), graph.status().to_string());
  const Value& w = (*graph)->value(*(*graph)->find_value("w"));
  REQUIRE(w.initializer.has_value());
  CHECK(w.initializer->values<float>()[0] == 1.0f);
  CHECK(w.initializer->values<float>()[3] == 4.0f);

  std::filesystem::create_directories(dir.path() / "data");
  dir.write("data/w.bin", float_bytes({5.0f, 6.0f, 7.0f, 8.0f}));
  auto nested = import_onnx_file(dir.write("nested.onnx", external_model("data/w.bin").bytes()).string());
  REQUIRE_MESSAGE(nested.is_ok(), nested.status().to_string());
  CHECK((*nested)->value(*(*nested)->find_value("w")).initializer->values<float>()[2] == 7.0f);
}

TEST_CASE("external data: locations that leave the model folder are refused") {
  TempDir dir;
  CHECK_IMPORT_ERROR(import_with_weights(dir, external_model("/etc/passwd")), StatusCode::kInvalidModel,
                     "absolute path");
  CHECK_IMPORT_ERROR(import_with_weights(dir, external_model("../weights.bin")), StatusCode::kInvalidModel,
                     "contains '..'");
  CHECK_IMPORT_ERROR(import_with_weights(dir, external_model("sub/../../weights.bin")), StatusCode::kInvalidModel,
                     "contains '..'");

  TempDir outside;
  outside.write("secret.bin", float_bytes({9, 9, 9, 9}));
  std::error_code error;
  std::filesystem::create_symlink(outside.path() / "secret.bin", dir.path() / "link.bin", error);
  std::filesystem::create_directory_symlink(outside.path(), dir.path() / "linkdir", error);
  if (error) {
    MESSAGE("SKIPPED symlink cases: " << error.message());
  } else {
    CHECK_IMPORT_ERROR(import_with_weights(dir, external_model("link.bin")), StatusCode::kInvalidModel,
                       "outside the model folder");
    CHECK_IMPORT_ERROR(import_with_weights(dir, external_model("linkdir/secret.bin")), StatusCode::kInvalidModel,
                       "outside the model folder");
  }
}

TEST_CASE("external data: ranges past the end of the file and size mismatches are refused") {
  TempDir dir;
  CHECK_IMPORT_ERROR(import_with_weights(dir, external_model("weights.bin", "100")), StatusCode::kInvalidModel,
                     "offset 100 is beyond the end");
  CHECK_IMPORT_ERROR(import_with_weights(dir, external_model("weights.bin", "8", "4096")), StatusCode::kInvalidModel,
                     "is beyond the end");
  CHECK_IMPORT_ERROR(import_with_weights(dir, external_model("weights.bin", "18446744073709551615", "16")),
                     StatusCode::kInvalidModel, "beyond the end");
  CHECK_IMPORT_ERROR(import_with_weights(dir, external_model("weights.bin", "4", "8")), StatusCode::kInvalidModel,
                     "the tensor's dims need 16");
  CHECK_IMPORT_ERROR(import_with_weights(dir, external_model("weights.bin", "-8")), StatusCode::kInvalidModel,
                     "not a non-negative integer");
  CHECK_IMPORT_ERROR(import_with_weights(dir, external_model("missing.bin")), StatusCode::kInvalidModel,
                     "does not exist");
}

TEST_CASE("external data: refused for a model given as bytes without a folder") {
  CHECK_IMPORT_ERROR(import_onnx_bytes(external_model("weights.bin").bytes(), ""), StatusCode::kInvalidModel,
                     "without a folder");
}
