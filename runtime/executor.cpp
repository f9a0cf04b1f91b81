#include "runtime/executor.h"

#include <chrono>
#include <cstring>

#include "runtime/op_table.h"
#include "runtime/ops/conv_pair.h"

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
  for (size_t i = 0; i < inputs.size(); ++i) EF_RETURN_IF_ERROR(check_input(i, inputs[i]));
  if (const int64_t batch = lane_batch(inputs); batch > 0) return run_lanes(inputs, batch);
  last_plan_ = options_.plan_memory ? plan_for(inputs) : nullptr;
  if (last_plan_ != nullptr) return run_planned(*last_plan_, inputs);
  return run_dynamic(inputs);
}

const MemoryPlan* Executor::plan_for(std::span<const Tensor> inputs) {
  const auto recent = [&] {
    if (recent_signature_ == nullptr || recent_signature_->size() != inputs.size()) return false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if ((*recent_signature_)[i] != inputs[i].shape()) return false;
    }
    return true;
  };
  if (recent()) return recent_plan_;
  std::vector<Shape> signature;
  for (const Tensor& input : inputs) signature.push_back(input.shape());
  auto [it, inserted] = plans_.try_emplace(std::move(signature));
  if (inserted) {
    ++plans_built_;
    std::vector<TensorDesc> descs;
    for (const Tensor& input : inputs) descs.push_back(input.desc());
    Result<MemoryPlan> plan = plan_memory(*graph_, descs, plan_options(options_));
    // Any failure (a rule that needs run-time values, or a shape error) leaves these shapes to the
    // dynamic path, which reports errors as it always has.
    it->second = std::make_unique<std::optional<MemoryPlan>>();
    if (plan.is_ok()) *it->second = std::move(*plan);
  }
  recent_signature_ = &it->first;
  recent_plan_ = it->second->has_value() ? &**it->second : nullptr;
  return recent_plan_;
}

Result<std::vector<Tensor>> Executor::run_planned(const MemoryPlan& plan, std::span<const Tensor> inputs) {
  const Graph& graph = *graph_;
  // arena_ is a default (data-less) tensor until some plan needs bytes.
  const bool has_arena = arena_.storage() != nullptr;
  if (plan.arena_bytes > 0 && (!has_arena || arena_.nbytes() < plan.arena_bytes)) {
    arena_ = Tensor::empty(DType::kU8, {static_cast<int64_t>(plan.arena_bytes)});
  }
  auto* arena = static_cast<unsigned char*>(arena_.raw_data());
  if (options_.poison_arena && arena != nullptr) std::memset(arena, 0xFF, arena_.nbytes());

  handed_out_.resize(graph.values().size());
  const auto output_storage = [&](size_t v, const TensorDesc& desc) {
    Tensor& last = handed_out_[v];
    const bool reusable = last.storage() != nullptr && last.storage().use_count() == 1 && last.desc() == desc;
    last =
        reusable ? Tensor::with_storage(desc.dtype, desc.shape, last.storage()) : Tensor::empty(desc.dtype, desc.shape);
    if (reusable && options_.poison_arena) std::memset(last.raw_data(), 0xFF, last.nbytes());
    return last;
  };
  std::vector<Tensor>& values = values_;
  if (bound_plan_ != &plan || bound_arena_ != arena) {
    values.assign(graph.values().size(), Tensor());
    for (size_t v = 0; v < values.size(); ++v) {
      const TensorDesc& desc = plan.descs[v];
      if (plan.known[v].has_data()) {
        values[v] = plan.known[v];  // initializers and folded values
      } else if (plan.offset[v] >= 0) {
        // Views made up front: a skipped Concat's output is never a node output here.
        values[v] = Tensor::wrap(desc.dtype, desc.shape, arena + plan.offset[v]);
      } else if (plan.between_pair[v]) {
        // Never stored: its pair's kernel neither writes nor reads it.
        values[v] = Tensor::meta(desc.dtype, desc.shape);
      }
    }
    written_into_.assign(values.size(), {});
    for (size_t v = 0; v < values.size(); ++v) {
      if (plan.written_into_output[v] != kNoValue) {
        written_into_[static_cast<size_t>(plan.written_into_output[v])].push_back(static_cast<ValueId>(v));
      }
    }
    bound_plan_ = &plan;
    bound_arena_ = arena;
  }
  // The inputs and separately stored values are the caller's: not held past the run.
  stored_.clear();
  struct LetGo {
    std::vector<Tensor>& values;
    const std::vector<size_t>& stored;
    ~LetGo() {
      for (size_t v : stored) values[v] = Tensor();
    }
  } let_go{values, stored_};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto v = static_cast<size_t>(graph.inputs()[i]);
    values[v] = inputs[i];
    stored_.push_back(v);
  }

  // A node's kernel arguments: inputs from `values` (which constant), outputs placed or allocated.
  const auto prepare = [&](size_t n, NodeArgs& args) {
    const Node& node = graph.nodes()[n];
    args.inputs.clear();
    args.constant_inputs = 0;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId input = node.inputs[i];
      args.inputs.push_back(input == kNoValue ? nullptr : &values[static_cast<size_t>(input)]);
      // The plan owns its known values (initializers, folded values) for the executor's lifetime.
      if (input != kNoValue && i < 32 && plan.known[static_cast<size_t>(input)].has_data()) {
        args.constant_inputs |= 1u << i;
      }
    }
    args.outputs.clear();
    for (ValueId output : node.outputs) {
      const auto v = static_cast<size_t>(output);
      const TensorDesc& desc = plan.descs[v];
      // Values written into a graph output's storage (PlanOptions::output_views): the output is
      // made when the first of them is, and all of them are bound at their offsets then (views
      // among them have no node to bind them).
      if (const ValueId target = plan.written_into_output[v]; target != kNoValue) {
        const auto t = static_cast<size_t>(target);
        if (values[t].storage() == nullptr) {
          values[t] = output_storage(t, plan.descs[t]);
          stored_.push_back(t);
          for (ValueId member : written_into_[t]) {
            const auto m = static_cast<size_t>(member);
            values[m] = Tensor::wrap(plan.descs[m].dtype, plan.descs[m].shape,
                                     static_cast<unsigned char*>(values[t].raw_data()) + plan.output_offset[m]);
            stored_.push_back(m);
          }
        }
      } else if (plan.offset[v] < 0 && !plan.between_pair[v]) {
        // Graph outputs (kept by the caller) and empty values get their own storage.
        values[v] = output_storage(v, desc);
        stored_.push_back(v);
      }
      args.outputs.push_back(&values[v]);
    }
  };

  NodeArgs& first = node_args_[0];
  NodeArgs& second = node_args_[1];
  if (options_.profile) profile_ms_.assign(graph.nodes().size(), 0.0);
  kernel_caches_.resize(graph.nodes().size());
  ran_pairs_ = plan.paired_with;
  std::vector<bool>& done = done_;
  done.assign(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    if (plan.node_skipped[n] || done[n]) continue;
    const auto node_start = std::chrono::steady_clock::now();
    const Node& node = graph.nodes()[n];
    prepare(n, first);
    const KernelArgs args{node, first.inputs, first.outputs, pool_.get(), &kernel_caches_[n], first.constant_inputs};
    bool ran_pair = false;
    if (const NodeId partner = plan.paired_with[n]; partner >= 0) {
      const auto m = static_cast<size_t>(partner);
      prepare(m, second);
      const KernelArgs partner_args{graph.nodes()[m], second.inputs,      second.outputs,
                                    pool_.get(),      &kernel_caches_[m], second.constant_inputs};
      Result<bool> paired = cpu_conv_pair(args, partner_args, plan.pair_any_size[n]);
      if (!paired.is_ok()) return paired.status().with_context(graph.describe_node(static_cast<NodeId>(n)));
      // The plan stored nothing between the two: there is no running them one by one.
      if (!*paired) {
        return Status(StatusCode::kInternal, make_message("the planned Conv pair declined to run at ",
                                                          graph.describe_node(static_cast<NodeId>(n))));
      }
      done[m] = ran_pair = true;
    }
    if (!ran_pair) {
      const OpDef& def = op_def(node.op);
      KernelFn kernel = (options_.reference_kernels || def.cpu == nullptr) ? def.reference : def.cpu;
      Status ran = kernel(args);
      if (!ran.is_ok()) return ran.with_context(graph.describe_node(static_cast<NodeId>(n)));
    }
    if (options_.profile) {
      profile_ms_[n] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - node_start).count();
    }
  }

  std::vector<Tensor> outputs;
  outputs.reserve(graph.outputs().size());
  for (ValueId output : graph.outputs()) {
    const auto v = static_cast<size_t>(output);
    // A folded output is copied: the caller may write to it, and the plan keeps it for later runs.
    const bool folded = plan.known[v].has_data() && !graph.values()[v].initializer;
    outputs.push_back(folded ? values[v].clone() : values[v]);
  }
  return outputs;
}

PlanOptions Executor::plan_options(const ExecutorOptions& options) {
  PlanOptions plan;
  plan.reference_kernels = options.reference_kernels;
  plan.output_views = true;
  plan.piece_views = true;
  if (!options.reference_kernels && options.conv_pairs) {
    plan.kernel_pair = cpu_conv_pair_planned;
    plan.kernel_pair_in_place = cpu_conv_pair_in_place;
    plan.memory_pair = [](const Node& first, const Node& second, std::span<const TensorDesc> descs,
                          MemoryPairTarget target) {
      switch (target) {
        case MemoryPairTarget::kInput:
          return cpu_conv_pair_in_place_any_size(first, second, descs);
        case MemoryPairTarget::kResidual:
          return cpu_conv_pair_over_residual_any_size(first, second, descs);
        case MemoryPairTarget::kOwnBytes:
          return cpu_conv_pair_pooling_input_any_size(first, second, descs);
      }
      return false;
    };
  }
  return plan;
}

Result<std::vector<Tensor>> Executor::run_dynamic(std::span<const Tensor> inputs) {
  ran_pairs_.clear();
  const Graph& graph = *graph_;
  std::vector<Tensor> values(graph.values().size());
  std::vector<int> remaining_uses = use_counts_;
  for (size_t i = 0; i < inputs.size(); ++i) values[static_cast<size_t>(graph.inputs()[i])] = inputs[i];
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
