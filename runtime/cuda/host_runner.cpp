#include "runtime/cuda/host_runner.h"

#include <cstring>

#include "runtime/op_table.h"

namespace edgefuse::gpu {

Status run_cpu_fallback(const Graph& graph, const LoweredPlan& lowered, const LoweredStep& step,
                        const std::function<Status(ValueId, Tensor&)>& read,
                        const std::function<Status(ValueId, const Tensor&)>& write) {
  const Node& node = graph.nodes()[static_cast<size_t>(step.node)];
  const MemoryPlan& plan = lowered.plan;
  std::vector<Tensor> inputs(node.inputs.size());
  std::vector<const Tensor*> input_pointers;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId v = node.inputs[i];
    if (v == kNoValue) {
      input_pointers.push_back(nullptr);
      continue;
    }
    const auto index = static_cast<size_t>(v);
    if (plan.known[index].has_data()) {
      inputs[i] = plan.known[index];
    } else {
      inputs[i] = Tensor::empty(plan.descs[index].dtype, plan.descs[index].shape);
      EF_RETURN_IF_ERROR(read(v, inputs[i]));
    }
    input_pointers.push_back(&inputs[i]);
  }
  std::vector<Tensor> outputs(node.outputs.size());
  std::vector<Tensor*> output_pointers;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const ValueId v = node.outputs[i];
    if (v != kNoValue) {
      outputs[i] = Tensor::empty(plan.descs[static_cast<size_t>(v)].dtype, plan.descs[static_cast<size_t>(v)].shape);
    }
    output_pointers.push_back(v == kNoValue ? nullptr : &outputs[i]);
  }
  const OpDef& def = op_def(node.op);
  const KernelFn kernel = def.cpu != nullptr ? def.cpu : def.reference;
  Status ran = kernel(KernelArgs{node, input_pointers, output_pointers, nullptr});
  if (!ran.is_ok()) return ran.with_context(graph.describe_node(step.node));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != kNoValue) EF_RETURN_IF_ERROR(write(node.outputs[i], outputs[i]));
  }
  return Status::ok();
}

namespace {

template <typename Step>
void run_items(const Step& step, ThreadPool* pool) {
  const int64_t n = step.count();
  if (pool == nullptr || n < 4096) {
    for (int64_t i = 0; i < n; ++i) step.run(i);
    return;
  }
  pool->parallel_for(n, 1024, [&step](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) step.run(i);
  });
}

}  // namespace

Result<std::vector<Tensor>> run_lowered_on_host(const Graph& graph, const LoweredPlan& lowered,
                                                std::span<const Tensor> inputs, ThreadPool* pool) {
  if (inputs.size() != graph.inputs().size()) {
    return invalid_argument("model takes ", graph.inputs().size(), " inputs, got ", inputs.size());
  }
  const MemoryPlan& plan = lowered.plan;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorDesc& planned = plan.descs[static_cast<size_t>(graph.inputs()[i])];
    if (inputs[i].desc().dtype != planned.dtype || inputs[i].shape() != planned.shape) {
      return invalid_argument("input ", i, " is ", inputs[i].desc().to_string(), ", the plan is for ",
                              planned.to_string());
    }
  }
  // The arena starts as NaN bytes, as device memory starts as whatever was there: a step that
  // reads bytes no earlier step wrote shows up in the outputs.
  Tensor arena = Tensor::empty(DType::kU8, {static_cast<int64_t>(plan.arena_bytes)});
  if (arena.nbytes() > 0) std::memset(arena.raw_data(), 0xFF, arena.nbytes());
  Tensor constants = Tensor::empty(DType::kU8, {static_cast<int64_t>(lowered.constants.size())});
  Tensor scratch = Tensor::empty(DType::kU8, {static_cast<int64_t>(lowered.scratch_bytes)});
  if (!lowered.constants.empty()) std::memcpy(constants.raw_data(), lowered.constants.data(), lowered.constants.size());
  std::vector<Tensor> outputs;
  Bindings bindings{arena.raw_data(), constants.raw_data(), scratch.raw_data(), {}, {}};
  for (const Tensor& input : inputs) bindings.inputs.push_back(input.raw_data());
  for (const TensorDesc& desc : lowered.output_descs) {
    outputs.push_back(Tensor::empty(desc.dtype, desc.shape));
    bindings.outputs.push_back(outputs.back().raw_data());
  }

  for (const LoweredStep& step : lowered.steps) {
    if (step.is_fallback()) {
      const auto read = [&](ValueId v, Tensor& tensor) {
        const BufferRef& ref = lowered.value_refs[static_cast<size_t>(v)];
        const void* from = resolve(bindings, ref);
        if (from == nullptr) return Status(StatusCode::kInternal, make_message("value ", v, " has no storage"));
        decode_stored(from, ref, tensor);
        return Status::ok();
      };
      const auto write = [&](ValueId v, const Tensor& tensor) {
        const BufferRef& ref = lowered.value_refs[static_cast<size_t>(v)];
        void* to = resolve(bindings, ref);
        if (to != nullptr) encode_stored(tensor, ref, to);
        return Status::ok();
      };
      EF_RETURN_IF_ERROR(run_cpu_fallback(graph, lowered, step, read, write));
      continue;
    }
    const StepParams params = bind_step(step, bindings);
    std::visit(
        [&](const auto& p) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(p)>, CpuFallbackStep>) run_items(p, pool);
        },
        params);
  }
  // As the device would hand it back: only the filtered rows, the rest zeros.
  if (const std::optional<RowFilterLayout>& filter = lowered.row_filter) {
    const auto* index = static_cast<const uint32_t*>(resolve(bindings, filter->index));
    const auto* compact = static_cast<const float*>(resolve(bindings, filter->compact));
    scatter_filtered_rows(*filter, index, compact, outputs[static_cast<size_t>(filter->filter.output)]);
  }
  return outputs;
}

}  // namespace edgefuse::gpu
