#include "models/onnx/onnx_importer.h"

#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "models/onnx/graph_builder.h"
#include "models/onnx/op_importers.h"
#include "models/onnx/static_shape_check.h"

namespace edgefuse {

namespace {

// Protobuf cannot parse messages of 2 GiB or more; bigger models must use external data.
constexpr uint64_t kMaxModelBytes = (uint64_t{2} << 30) - 1;

Status check_model_size(uint64_t bytes) {
  if (bytes == 0) return invalid_model("the model is empty (0 bytes)");
  if (bytes > kMaxModelBytes) {
    return invalid_model("the model is ", bytes,
                         " bytes, over the 2 GiB limit of a protobuf message (store "
                         "weights as external data)");
  }
  return Status::ok();
}

Result<int> default_domain_opset(const onnx::ModelProto& model) {
  std::optional<int64_t> opset;
  for (const onnx::OperatorSetIdProto& entry : model.opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx") {
      if (opset) return invalid_model("the default ONNX domain is imported twice");
      opset = entry.version();
    }
  }
  if (!opset) return invalid_model("the model imports no opset of the default ONNX domain");
  if (*opset < kMinOpset || *opset > kMaxOpset) {
    return unsupported("opset ", *opset, " is not supported (supported: ", kMinOpset, "..", kMaxOpset, ")");
  }
  return static_cast<int>(*opset);
}

Status check_model_header(const onnx::ModelProto& model) {
  if (!model.has_graph()) return invalid_model("not an ONNX model: it has no graph (truncated, or another format)");
  if (model.ir_version() <= 0) return invalid_model("not an ONNX model: ir_version is missing");
  if (model.ir_version() > onnx::IR_VERSION) {
    return unsupported("IR version ", model.ir_version(), " is newer than supported (", onnx::IR_VERSION, ")");
  }
  return Status::ok();
}

// The checker reads external data files relative to the process's working folder, so it checks a
// copy whose external initializers hold the bytes we already read and validated.
onnx::ModelProto with_inlined_external_data(const onnx::ModelProto& model, const Graph& graph) {
  onnx::ModelProto copy = model;
  for (onnx::TensorProto& tensor : *copy.mutable_graph()->mutable_initializer()) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL) continue;
    const std::optional<ValueId> id = graph.find_value(tensor.name());
    if (!id || !graph.value(*id).initializer) continue;
    const Tensor& data = *graph.value(*id).initializer;
    tensor.clear_external_data();
    tensor.clear_data_location();
    tensor.set_raw_data(data.raw_data(), data.nbytes());
  }
  return copy;
}

bool has_external_data(const onnx::ModelProto& model) {
  for (const onnx::TensorProto& tensor : model.graph().initializer()) {
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL) return true;
  }
  return false;
}

// OnnxImportOptions::input_dims applied to the model's declared graph inputs.
Status fix_input_dims(onnx::ModelProto& model, const std::map<std::string, std::vector<int64_t>>& input_dims) {
  for (const auto& [name, dims] : input_dims) {
    onnx::ValueInfoProto* input = nullptr;
    for (onnx::ValueInfoProto& candidate : *model.mutable_graph()->mutable_input()) {
      if (candidate.name() == name) input = &candidate;
    }
    if (input == nullptr) return invalid_argument("no graph input named '", name, "' to give dims to");
    onnx::TensorShapeProto* shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() != 0 && shape->dim_size() != static_cast<int>(dims.size())) {
      return invalid_argument("input '", name, "' has rank ", shape->dim_size(), ", given ", dims.size(), " dims");
    }
    while (shape->dim_size() < static_cast<int>(dims.size())) shape->add_dim();
    for (size_t i = 0; i < dims.size(); ++i) {
      onnx::TensorShapeProto::Dimension* dim = shape->mutable_dim(static_cast<int>(i));
      if (dims[i] < 0) continue;
      if (dim->has_dim_value() && dim->dim_value() != dims[i]) {
        return invalid_argument("input '", name, "' dim ", i, " is fixed at ", dim->dim_value(), ", given ", dims[i]);
      }
      dim->set_dim_value(dims[i]);
    }
  }
  return Status::ok();
}

Status run_onnx_checks(onnx::ModelProto& model, const OnnxImportOptions& options, GraphBuilder& builder) {
  if (options.run_checker) {
    try {
      onnx::checker::check_model(model);
    } catch (const std::exception& e) {
      return invalid_model("ONNX checker: ", e.what());
    }
  }
  if (options.run_shape_inference) {
    try {
      const onnx::ShapeInferenceOptions inference_options(/*check_type_val=*/false, /*strict_mode_val=*/1);
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), inference_options);
    } catch (const std::exception& e) {
      return invalid_model("ONNX shape inference: ", e.what());
    }
    EF_RETURN_IF_ERROR(builder.refine_descs(model.graph()));
  }
  return Status::ok();
}

}  // namespace

Result<std::shared_ptr<Graph>> import_onnx_bytes(const std::string& bytes, const std::string& model_dir,
                                                 const OnnxImportOptions& options) {
  EF_RETURN_IF_ERROR(check_model_size(bytes.size()));
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return invalid_model("not a valid ONNX model: protobuf parsing failed (truncated, or another format)");
  }
  EF_RETURN_IF_ERROR(check_model_header(model));
  EF_RETURN_IF_ERROR(fix_input_dims(model, options.input_dims));
  EF_ASSIGN_OR_RETURN(const int opset, default_domain_opset(model));

  // Our own validation and conversion first: ONNX's checker and shape inference are not hardened
  // against hostile attribute values or tensors, so they only see models that passed it.
  GraphBuilder builder(opset, model_dir);
  EF_RETURN_IF_ERROR(builder.add_graph(model.graph()));
  // The installed ONNX library checks only the opsets it knows (1.12: up to 17); newer models rely
  // on our validation alone.
  const int library_opset = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
  if (opset <= library_opset && (options.run_checker || options.run_shape_inference)) {
    if (has_external_data(model)) model = with_inlined_external_data(model, builder.graph());
    EF_RETURN_IF_ERROR(run_onnx_checks(model, options, builder));
  }
  EF_ASSIGN_OR_RETURN(std::shared_ptr<Graph> graph, builder.finish());
  EF_ASSIGN_OR_RETURN(std::vector<std::optional<TensorDesc>> inferred, infer_static_shapes(*graph));
  for (size_t v = 0; v < inferred.size(); ++v) {
    if (inferred[v]) builder.set_desc(static_cast<ValueId>(v), *inferred[v]);
  }
  return graph;
}

Result<std::shared_ptr<Graph>> import_onnx_file(const std::string& path, const OnnxImportOptions& options) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return io_error("model file '", path, "' does not exist or is not a file");
  const uint64_t size = fs::file_size(path, error);
  if (error) return io_error("cannot read the size of model file '", path, "': ", error.message());
  Status size_ok = check_model_size(size);
  if (!size_ok.is_ok()) return size_ok.with_context(make_message("model file '", path, "'"));

  std::ifstream file(path, std::ios::binary);
  std::string bytes(size, '\0');
  if (!file.read(bytes.data(), static_cast<std::streamsize>(size))) {
    return io_error("cannot read model file '", path, "'");
  }
  const fs::path parent = fs::path(path).parent_path();
  const std::string model_dir = parent.empty() ? fs::current_path(error).string() : parent.string();
  Result<std::shared_ptr<Graph>> graph = import_onnx_bytes(bytes, model_dir, options);
  if (!graph.is_ok()) return graph.status().with_context(make_message("model file '", path, "'"));
  return graph;
}

}  // namespace edgefuse
