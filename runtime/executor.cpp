#include "runtime/executor.h"

#include <chrono>

#include "runtime/op_table.h"

namespace edgefuse {

Result<Executor> Executor::create(std::shared_ptr<const Graph> graph, ExecutorOptions options) {
  EF_ASSERT(graph != nullptr);
  EF_RETURN_IF_ERROR(graph->verify());
  Executor executor;
  executor.graph_ = std::move(graph);
  executor.options_ = options;
  const int threads = options.threads <= 0 ? ThreadPool::hardware_threads() : options.threads;
  if (threads > 1) executor.pool_ = std::make_unique<ThreadPool>(threads);
  executor.buffers_ = std::make_unique<BufferPool>();
  executor.use_counts_.assign(executor.graph_->values().size(), 0);
  for (const Node& node : executor.graph_->nodes()) {
    for (ValueId input : node.inputs) {
      if (input != kNoValue) ++executor.use_counts_[static_cast<size_t>(input)];
    }
  }
  for (ValueId output : executor.graph_->outputs()) ++executor.use_counts_[static_cast<size_t>(output)];
  return executor;
}

Status Executor::check_input(size_t index, const Tensor& tensor) const {
  const Value& value = graph_->value(graph_->inputs()[index]);
  if (!tensor.has_data()) return invalid_argument("input '", value.name, "' has no data");
  if (tensor.dtype() != value.desc.dtype) {
    return invalid_argument("input '", value.name, "' is ", dtype_name(tensor.dtype()), ", the model expects ",
                            dtype_name(value.desc.dtype));
  }
  const Shape& expected = value.desc.shape;
  bool shape_ok = expected.size() == tensor.shape().size();
  for (size_t d = 0; shape_ok && d < expected.size(); ++d) {
    shape_ok = expected[d] < 0 || expected[d] == tensor.shape()[d];
  }
  if (!shape_ok) {
    return invalid_argument("input '", value.name, "' has shape ", shape_to_string(tensor.shape()),
                            ", the model expects ", shape_to_string(expected), " (-1 = any)");
  }
  return Status::ok();
}

Result<std::vector<Tensor>> Executor::run(std::span<const Tensor> inputs) {
  const Graph& graph = *graph_;
  if (inputs.size() != graph.inputs().size()) {
    return invalid_argument("model takes ", graph.inputs().size(), " inputs, got ", inputs.size());
  }
  std::vector<Tensor> values(graph.values().size());
  std::vector<int> remaining_uses = use_counts_;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EF_RETURN_IF_ERROR(check_input(i, inputs[i]));
    values[static_cast<size_t>(graph.inputs()[i])] = inputs[i];
  }
  for (size_t i = 0; i < graph.values().size(); ++i) {
    if (graph.values()[i].initializer) values[i] = *graph.values()[i].initializer;
  }

  std::vector<const Tensor*> node_inputs;
  std::vector<Tensor*> node_outputs;
  std::vector<TensorDesc> output_descs;
  if (options_.profile) profile_ms_.assign(graph.nodes().size(), 0.0);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const auto node_start = std::chrono::steady_clock::now();
    const Node& node = graph.nodes()[n];
    const auto node_id = static_cast<NodeId>(n);
    node_inputs.clear();
    for (ValueId input : node.inputs) {
      node_inputs.push_back(input == kNoValue ? nullptr : &values[static_cast<size_t>(input)]);
    }
    Status inferred = op_def(node.op).infer(node, node_inputs, output_descs);
    if (!inferred.is_ok()) return inferred.with_context(graph.describe_node(node_id));
    if (output_descs.size() != node.outputs.size()) {
      return Status(StatusCode::kInternal, make_message(graph.describe_node(node_id), ": shape rule gave ",
                                                        output_descs.size(), " outputs for ", node.outputs.size()));
    }
    node_outputs.clear();
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      Status valid = validate_shape(output_descs[o].shape, dtype_size(output_descs[o].dtype));
      if (!valid.is_ok()) {
        return valid.with_context(
            make_message(graph.describe_node(node_id), " output '", graph.value(node.outputs[o]).name, "'"));
      }
      Tensor& out = values[static_cast<size_t>(node.outputs[o])];
      out = buffers_->take(output_descs[o].dtype, output_descs[o].shape);
      node_outputs.push_back(&out);
    }
    const OpDef& def = op_def(node.op);
    KernelFn kernel = (options_.reference_kernels || def.cpu == nullptr) ? def.reference : def.cpu;
    Status ran = kernel(KernelArgs{node, node_inputs, node_outputs, pool_.get()});
    if (!ran.is_ok()) return ran.with_context(graph.describe_node(node_id));
    if (options_.profile) {
      profile_ms_[n] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - node_start).count();
    }
    for (ValueId input : node.inputs) {
      if (input != kNoValue && --remaining_uses[static_cast<size_t>(input)] == 0) {
        buffers_->give_back(values[static_cast<size_t>(input)]);
      }
    }
  }

  std::vector<Tensor> outputs;
  outputs.reserve(graph.outputs().size());
  for (ValueId output : graph.outputs()) outputs.push_back(values[static_cast<size_t>(output)]);
  return outputs;
}

}  // namespace edgefuse
