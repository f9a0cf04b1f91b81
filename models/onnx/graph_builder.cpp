#include "models/onnx/graph_builder.h"

#include <set>

#include "models/onnx/op_importers.h"
#include "models/onnx/tensor_proto.h"
#include "runtime/op_table.h"

namespace edgefuse {

// ---- Value descriptions -------------------------------------------------------------------

Result<std::optional<TensorDesc>> desc_from_value_info(const onnx::ValueInfoProto& info) {
  if (!info.has_type() || !info.type().has_tensor_type()) return std::optional<TensorDesc>();
  const onnx::TypeProto::Tensor& tensor_type = info.type().tensor_type();
  const std::optional<DType> dtype = dtype_from_onnx(tensor_type.elem_type());
  if (!dtype || !tensor_type.has_shape()) return std::optional<TensorDesc>();
  Shape shape;
  Shape known_part;  // unknown dims counted as 1, to check the known ones fit
  for (const onnx::TensorShapeProto::Dimension& dim : tensor_type.shape().dim()) {
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0) {
        return invalid_model("value '", info.name(), "': negative dimension ", dim.dim_value());
      }
      shape.push_back(dim.dim_value());
      known_part.push_back(dim.dim_value());
    } else {
      shape.push_back(-1);
      known_part.push_back(1);
    }
  }
  Status valid = validate_shape(known_part, dtype_size(*dtype));
  if (!valid.is_ok()) return invalid_model("value '", info.name(), "': ", valid.message());
  return std::optional<TensorDesc>(TensorDesc{*dtype, std::move(shape)});
}

// ---- NodeImportContext --------------------------------------------------------------------

NodeImportContext::NodeImportContext(GraphBuilder& builder, const onnx::NodeProto& proto, int index, int opset,
                                     Node& node, AttributeReader& attrs)
    : builder_(builder), proto_(proto), index_(index), opset_(opset), node_(node), attrs_(attrs) {}

const Tensor* NodeImportContext::constant_input(int index) const {
  if (!has_input(index)) return nullptr;
  const Value& value = builder_.graph().value(node_.inputs[static_cast<size_t>(index)]);
  return value.initializer ? &*value.initializer : nullptr;
}

std::optional<TensorDesc> NodeImportContext::input_desc(int index) const {
  if (!has_input(index)) return std::nullopt;
  const ValueId id = node_.inputs[static_cast<size_t>(index)];
  if (!builder_.desc_known(id)) return std::nullopt;
  return builder_.graph().value(id).desc;
}

int NodeImportContext::input_rank(int index) const {
  const std::optional<TensorDesc> desc = input_desc(index);
  return desc ? desc->rank() : -1;
}

void NodeImportContext::set_constant_input(int index, const std::string& suffix, Tensor value) {
  const ValueId id = builder_.add_constant(node_.name + "/" + suffix, std::move(value));
  if (static_cast<int>(node_.inputs.size()) <= index) node_.inputs.resize(static_cast<size_t>(index) + 1, kNoValue);
  node_.inputs[static_cast<size_t>(index)] = id;
}

void NodeImportContext::set_scalar_input_like(int index, const std::string& suffix, double value, int like_input) {
  set_constant_input(index, suffix, Tensor::scalar<float>(static_cast<float>(value)));
  const ValueId constant = node_.inputs[static_cast<size_t>(index)];
  const ValueId like = node_.inputs[static_cast<size_t>(like_input)];
  const std::string where = context();
  defer([constant, like, value, where](GraphBuilder& builder) -> Status {
    if (!builder.desc_known(like)) return Status::ok();
    const DType dtype = builder.graph().value(like).desc.dtype;
    Tensor converted;
    switch (dtype) {
      case DType::kF32:
        return Status::ok();
      case DType::kF64:
        converted = Tensor::scalar<double>(value);
        break;
      case DType::kF16:
        converted = Tensor::scalar<Half>(float_to_half(static_cast<float>(value)));
        break;
      default:
        return invalid_model(where, ": input must be a float type for this opset, got ", dtype_name(dtype));
    }
    builder.set_desc(constant, converted.desc());
    builder.graph().value(constant).initializer = std::move(converted);
    return Status::ok();
  });
}

void NodeImportContext::keep_inputs(int count) {
  if (static_cast<int>(node_.inputs.size()) > count) node_.inputs.resize(static_cast<size_t>(count));
}

void NodeImportContext::defer(std::function<Status(GraphBuilder&)> step) {
  builder_.defer(std::move(step));
}

Status NodeImportContext::check_axis(const std::string& what, int64_t axis, int rank) const {
  if (rank < 0) return Status::ok();
  if (axis < -rank || axis >= rank) return invalid(what, " ", axis, " is out of range for rank ", rank);
  return Status::ok();
}

Status NodeImportContext::check_axes(const std::string& what, const std::vector<int64_t>& axes, int rank) const {
  std::set<int64_t> seen;
  for (int64_t axis : axes) {
    EF_RETURN_IF_ERROR(check_axis(what, axis, rank));
    const int64_t normalized = (rank >= 0 && axis < 0) ? axis + rank : axis;
    if (!seen.insert(normalized).second) return invalid(what, " ", shape_to_string(axes), " repeats axis ", axis);
  }
  return Status::ok();
}

// ---- GraphBuilder -------------------------------------------------------------------------

GraphBuilder::GraphBuilder(int opset, std::string model_dir) : opset_(opset), model_dir_(std::move(model_dir)) {}

void GraphBuilder::set_desc(ValueId id, TensorDesc desc) {
  graph_->value(id).desc = std::move(desc);
  desc_known_.at(static_cast<size_t>(id)) = true;
}

ValueId GraphBuilder::add_value(const std::string& name, std::optional<TensorDesc> desc) {
  const ValueId id = graph_->add_value(name, desc.value_or(TensorDesc{}));
  desc_known_.push_back(desc.has_value());
  if (!name.empty()) by_name_.emplace(name, id);
  return id;
}

ValueId GraphBuilder::add_constant(const std::string& base, Tensor value) {
  std::string name = base;
  for (int suffix = 1; by_name_.count(name) != 0 || producer_index_.count(name) != 0; ++suffix) {
    name = make_message(base, "_", suffix);
  }
  const ValueId id = graph_->add_initializer(name, std::move(value));
  desc_known_.push_back(true);
  by_name_.emplace(name, id);
  return id;
}

Status GraphBuilder::add_graph(const onnx::GraphProto& graph) {
  for (const auto* infos : {&graph.value_info(), &graph.output()}) {
    for (const onnx::ValueInfoProto& info : *infos) {
      EF_ASSIGN_OR_RETURN(std::optional<TensorDesc> desc, desc_from_value_info(info));
      if (desc) declared_[info.name()] = std::move(*desc);
    }
  }
  EF_RETURN_IF_ERROR(add_initializers(graph));
  EF_RETURN_IF_ERROR(add_inputs(graph));
  EF_RETURN_IF_ERROR(index_producers(graph));
  for (int i = 0; i < graph.node_size(); ++i) EF_RETURN_IF_ERROR(add_node(graph.node(i), i));
  return add_outputs(graph);
}

Status GraphBuilder::add_initializers(const onnx::GraphProto& graph) {
  if (graph.sparse_initializer_size() > 0) return unsupported("sparse initializers are not supported");
  for (const onnx::TensorProto& proto : graph.initializer()) {
    if (proto.name().empty()) return invalid_model("an initializer has no name");
    if (by_name_.count(proto.name()) != 0) return invalid_model("initializer '", proto.name(), "' is defined twice");
    EF_ASSIGN_OR_RETURN(Tensor tensor, tensor_from_proto(proto, model_dir_));
    const ValueId id = graph_->add_initializer(proto.name(), std::move(tensor));
    desc_known_.push_back(true);
    by_name_.emplace(proto.name(), id);
  }
  return Status::ok();
}

Status GraphBuilder::add_inputs(const onnx::GraphProto& graph) {
  for (const onnx::ValueInfoProto& info : graph.input()) {
    const std::string& name = info.name();
    if (name.empty()) return invalid_model("a graph input has no name");
    if (by_name_.count(name) != 0) {
      if (graph_->value(by_name_.at(name)).initializer) continue;  // an initializer listed as input (IR < 4)
      return invalid_model("graph input '", name, "' is listed twice");
    }
    if (!info.type().has_tensor_type()) return unsupported("graph input '", name, "' is not a tensor");
    const int32_t elem_type = info.type().tensor_type().elem_type();
    if (!dtype_from_onnx(elem_type)) {
      return unsupported("graph input '", name, "': element type ", onnx_type_name(elem_type), " is not supported");
    }
    if (!info.type().tensor_type().has_shape()) {
      return unsupported("graph input '", name, "' has no shape (unknown rank is not supported)");
    }
    EF_ASSIGN_OR_RETURN(std::optional<TensorDesc> desc, desc_from_value_info(info));
    graph_->inputs().push_back(add_value(name, std::move(desc)));
  }
  return Status::ok();
}

Status GraphBuilder::index_producers(const onnx::GraphProto& graph) {
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const std::string& output : graph.node(i).output()) {
      if (output.empty()) continue;
      auto [it, inserted] = producer_index_.emplace(output, i);
      if (!inserted) {
        return invalid_model("node '", graph.node(i).name(), "' (", graph.node(i).op_type(), ", index ", i,
                             "): output '", output, "' is already produced by node index ", it->second);
      }
    }
  }
  return Status::ok();
}

Result<ValueId> GraphBuilder::resolve_input(const std::string& name, int index, const std::string& context) const {
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  if (auto it = producer_index_.find(name); it != producer_index_.end()) {
    return invalid_model(context, ": input '", name, "' is produced by node index ", it->second,
                         it->second == index ? " (itself)" : ", which comes later",
                         ": the graph is not topologically sorted");
  }
  return invalid_model(context, ": input '", name,
                       "' is not defined (no graph input, initializer or earlier node output has this name)");
}

Status GraphBuilder::add_node(const onnx::NodeProto& proto, int index) {
  const std::string& op_type = proto.op_type();
  const std::string name = proto.name().empty() ? make_message(op_type, "_", index) : proto.name();
  if (!proto.domain().empty() && proto.domain() != "ai.onnx") {
    return unsupported("node '", name, "' (index ", index, "): op '", proto.domain(), ".", op_type,
                       "' is not supported (only the default ONNX domain is)");
  }
  const OpImporter* importer = find_op_importer(op_type);
  if (importer == nullptr)
    return unsupported("node '", name, "' (index ", index, "): op '", op_type, "' is not supported");
  const std::string context = make_message("node '", name, "' (", op_type, ", index ", index, ")");
  if (opset_ < importer->min_opset) {
    return unsupported(context, ": opset ", opset_, " is not supported for this op (oldest: ", importer->min_opset,
                       ")");
  }

  Node node;
  node.op = importer->kind;
  node.name = name;
  for (const std::string& input : proto.input()) {
    if (input.empty()) {
      node.inputs.push_back(kNoValue);
    } else {
      EF_ASSIGN_OR_RETURN(ValueId id, resolve_input(input, index, context));
      node.inputs.push_back(id);
    }
  }
  int output_count = proto.output_size();
  while (output_count > 0 && proto.output(output_count - 1).empty()) --output_count;  // omitted optional outputs
  for (int o = 0; o < output_count; ++o) {
    const std::string& output = proto.output(o);
    if (by_name_.count(output) != 0) {
      return invalid_model(context, ": output '", output, "' is already defined (graph input or initializer)");
    }
  }

  AttributeReader attrs(proto, context, model_dir_);
  EF_RETURN_IF_ERROR(attrs.validate());
  NodeImportContext ctx(*this, proto, index, opset_, node, attrs);

  if (importer->kind == OpKind::kConstant) {  // becomes an initializer named like its output
    if (proto.input_size() != 0 || output_count != 1) return ctx.invalid("a Constant takes no inputs, one output");
    EF_ASSIGN_OR_RETURN(Tensor value, constant_node_value(ctx));
    EF_RETURN_IF_ERROR(attrs.finish());
    const ValueId id = graph_->add_initializer(proto.output(0), std::move(value));
    desc_known_.push_back(true);
    by_name_.emplace(proto.output(0), id);
    return Status::ok();
  }

  for (int o = 0; o < output_count; ++o) {
    const std::string& output = proto.output(o);
    if (output.empty()) {  // an omitted optional output between used ones
      node.outputs.push_back(add_value(make_message(name, "/unused_output_", o), std::nullopt));
      continue;
    }
    auto declared = declared_.find(output);
    node.outputs.push_back(
        add_value(output, declared == declared_.end() ? std::nullopt : std::optional<TensorDesc>(declared->second)));
  }
  EF_RETURN_IF_ERROR(importer->import(ctx));
  EF_RETURN_IF_ERROR(attrs.finish());

  const OpDef& def = op_def(node.op);
  const int inputs = node.input_count();
  if (inputs < def.min_inputs || inputs > def.max_inputs) {
    return invalid_model(context, ": has ", inputs, " inputs, ", def.name, " takes ", def.min_inputs, "..",
                         def.max_inputs);
  }
  const auto outputs = static_cast<int>(node.outputs.size());
  if (outputs < def.min_outputs || outputs > def.max_outputs) {
    return invalid_model(context, ": has ", outputs, " outputs, ", def.name, " gives ", def.min_outputs, "..",
                         def.max_outputs);
  }
  graph_->add_node(std::move(node));
  return Status::ok();
}

Status GraphBuilder::add_outputs(const onnx::GraphProto& graph) {
  if (graph.output_size() == 0) return invalid_model("the graph has no outputs");
  for (const onnx::ValueInfoProto& info : graph.output()) {
    auto it = by_name_.find(info.name());
    if (it == by_name_.end()) {
      return invalid_model("graph output '", info.name(), "' is not produced by any node, input or initializer");
    }
    graph_->outputs().push_back(it->second);
  }
  return Status::ok();
}

Status GraphBuilder::refine_descs(const onnx::GraphProto& inferred) {
  for (const auto* infos : {&inferred.value_info(), &inferred.output()}) {
    for (const onnx::ValueInfoProto& info : *infos) {
      auto it = by_name_.find(info.name());
      if (it == by_name_.end()) continue;
      Result<std::optional<TensorDesc>> desc = desc_from_value_info(info);
      if (!desc.is_ok() || !desc->has_value()) continue;  // inference output is not trusted: skip bad entries
      const TensorDesc& found = **desc;
      if (!desc_known(it->second)) {
        set_desc(it->second, found);
        continue;
      }
      TensorDesc& current = graph_->value(it->second).desc;
      if (current.dtype != found.dtype || current.rank() != found.rank()) continue;
      for (size_t d = 0; d < current.shape.size(); ++d) {
        if (current.shape[d] < 0) current.shape[d] = found.shape[d];
      }
    }
  }
  return Status::ok();
}

Result<std::shared_ptr<Graph>> GraphBuilder::finish() {
  for (auto& step : deferred_) EF_RETURN_IF_ERROR(step(*this));
  deferred_.clear();
  Status verified = graph_->verify();
  if (!verified.is_ok()) return invalid_model("imported graph is inconsistent: ", verified.message());
  return graph_;
}

}  // namespace edgefuse
