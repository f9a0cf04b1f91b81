// Builds small ONNX models in memory for importer tests (onnx protobuf API), and helpers to
// import them and inspect the resulting IR.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "models/onnx/onnx_importer.h"

namespace edgefuse::test {

class OnnxModelBuilder {
 public:
  explicit OnnxModelBuilder(int opset = 13);

  // dims of -1 become a symbolic dim "N".
  onnx::ValueInfoProto* input(const std::string& name, const std::vector<int64_t>& dims,
                              int32_t elem_type = onnx::TensorProto::FLOAT);
  // Without dims the output's shape is filled from ONNX shape inference by bytes(), when it can.
  onnx::ValueInfoProto* output(const std::string& name, int32_t elem_type = onnx::TensorProto::FLOAT);
  onnx::ValueInfoProto* output(const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims);
  onnx::TensorProto* initializer(const std::string& name, const std::vector<int64_t>& dims,
                                 const std::vector<float>& values);
  onnx::TensorProto* initializer_i64(const std::string& name, const std::vector<int64_t>& dims,
                                     const std::vector<int64_t>& values);
  onnx::NodeProto* node(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "");

  onnx::ModelProto& model() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  std::string bytes() const;

 private:
  onnx::ModelProto model_;
};

void set_int(onnx::NodeProto* node, const std::string& name, int64_t value);
void set_ints(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values);
void set_float(onnx::NodeProto* node, const std::string& name, float value);
void set_floats(onnx::NodeProto* node, const std::string& name, const std::vector<float>& values);
void set_string(onnx::NodeProto* node, const std::string& name, const std::string& value);

// Imports from memory without a model folder.
Result<std::shared_ptr<Graph>> import_model(const OnnxModelBuilder& builder, const OnnxImportOptions& options = {});

// Node count per op name ("Conv" -> 113).
std::map<std::string, int> count_ops(const Graph& graph);

// The single node of `graph` with op `op` (fails the test when there is not exactly one).
const Node& only_node(const Graph& graph, OpKind op);

// A fresh empty folder under the system temp folder, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& bytes) const;

 private:
  std::filesystem::path path_;
};

}  // namespace edgefuse::test

namespace edgefuse::test {

// True when `status` has `code` and its message contains `needle`; the test prints the status.
bool error_mentions(const Status& status, StatusCode code, const std::string& needle);

}  // namespace edgefuse::test

// Checks an import result failed with `code` and a message mentioning `needle`.
#define CHECK_IMPORT_ERROR(result, code, needle)                                                                \
  do {                                                                                                          \
    const auto& ef_result_ = (result);                                                                          \
    CHECK_MESSAGE(::edgefuse::test::error_mentions(ef_result_.status(), (code), (needle)),                      \
                  "got: " << (ef_result_.is_ok() ? std::string("success") : ef_result_.status().to_string())    \
                          << "; expected " << ::edgefuse::status_code_name(code) << " mentioning '" << (needle) \
                          << "'");                                                                              \
  } while (0)
