#include "models/detector/batching.h"

#include <cmath>
#include <random>

namespace edgefuse {
namespace {

bool is_batch_leading_shape(const Tensor& shape) {
  return shape.dtype() == DType::kI64 && shape.rank() == 1 && shape.dim(0) >= 2 && shape.data<int64_t>()[0] == 1;
}

double relative_l2(const float* got, const float* want, int64_t count) {
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = static_cast<double>(got[i]) - want[i];
    diff += d * d;
    norm += static_cast<double>(want[i]) * want[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

}  // namespace

Result<std::shared_ptr<Graph>> make_batch_dynamic(const Graph& graph) {
  if (graph.inputs().size() != 1)
    return unsupported("batching needs a model with one input, this one has ", graph.inputs().size());
  auto batched = std::make_shared<Graph>(graph);
  Value& input = batched->value(batched->inputs()[0]);
  if (input.desc.shape.empty() || input.desc.shape[0] != 1) {
    return unsupported("batching needs an input of batch 1, '", input.name, "' is ", shape_to_string(input.desc.shape));
  }
  input.desc.shape[0] = -1;
  for (ValueId output : batched->outputs()) {
    Shape& shape = batched->value(output).desc.shape;
    if (!shape.empty() && shape[0] == 1) shape[0] = -1;
  }
  for (size_t n = 0; n < batched->nodes().size(); ++n) {
    Node& node = batched->nodes()[n];
    if (node.op != OpKind::kReshape || !node.has_input(1)) continue;
    const Value& shape_value = batched->value(node.inputs[1]);
    if (!shape_value.initializer || !is_batch_leading_shape(*shape_value.initializer)) continue;
    const Tensor& old_shape = *shape_value.initializer;
    Tensor new_shape = Tensor::empty(DType::kI64, old_shape.shape());
    std::copy_n(old_shape.data<int64_t>(), old_shape.numel(), new_shape.data<int64_t>());
    new_shape.data<int64_t>()[0] = 0;  // copy the batch from the input (allowzero=0, the default)
    const std::string name = shape_value.name + "/batch_dynamic";
    node.inputs[1] = batched->add_initializer(name, std::move(new_shape));
  }
  EF_RETURN_IF_ERROR(batched->verify());
  return batched;
}

Status check_batch_equivalence(const std::shared_ptr<const Graph>& original,
                               const std::shared_ptr<const Graph>& batched, int batch, const ExecutorOptions& options,
                               double tolerance) {
  EF_ASSIGN_OR_RETURN(Executor lone, Executor::create(original, options));
  EF_ASSIGN_OR_RETURN(Executor together, Executor::create(batched, options));
  const Shape one = original->value(original->inputs()[0]).desc.shape;
  if (one.empty() || batch < 1) return invalid_argument("batch check needs a batched input and a batch of at least 1");
  Shape many{batch};
  many.insert(many.end(), one.begin() + 1, one.end());
  Tensor inputs = Tensor::empty(DType::kF32, many);
  std::mt19937 random(1234);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (int64_t i = 0; i < inputs.numel(); ++i) inputs.data<float>()[i] = uniform(random);
  EF_ASSIGN_OR_RETURN(std::vector<Tensor> batched_outputs, together.run(std::span<const Tensor>(&inputs, 1)));

  const int64_t per_item = inputs.numel() / batch;
  for (int b = 0; b < batch; ++b) {
    Tensor item = Tensor::wrap(DType::kF32, one, inputs.data<float>() + b * per_item);
    EF_ASSIGN_OR_RETURN(std::vector<Tensor> lone_outputs, lone.run(std::span<const Tensor>(&item, 1)));
    for (size_t o = 0; o < lone_outputs.size(); ++o) {
      const Tensor& want = lone_outputs[o];
      const Tensor& got = batched_outputs[o];
      if (got.dtype() != DType::kF32 || got.numel() != want.numel() * batch || got.dim(0) != batch) {
        return unsupported("batch ", batch, " changes output ", o, " to ", got.desc().to_string(),
                           " (alone: ", want.desc().to_string(), ")");
      }
      const double error = relative_l2(got.data<float>() + b * want.numel(), want.data<float>(), want.numel());
      if (!(error <= tolerance)) {
        return unsupported("batch ", batch, " changes output ", o, " of item ", b, " (relative L2 ", error, ")");
      }
    }
  }
  return Status::ok();
}

}  // namespace edgefuse
