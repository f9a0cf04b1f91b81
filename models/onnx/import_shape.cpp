// Shape and data-movement ops: older attribute forms become constant int64 inputs.
#include <algorithm>
#include <numeric>

#include "models/onnx/op_importers.h"
#include "models/onnx/tensor_proto.h"

namespace edgefuse {

namespace {

using Ints = std::vector<int64_t>;

Tensor int64_vector(const Ints& values) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())}, values);
}

// Copies an int attribute to the IR node when present, checking it as an axis of `rank`.
Status copy_axis(NodeImportContext& ctx, const char* name, int64_t fallback, int rank) {
  EF_ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().get_int(name, fallback));
  EF_RETURN_IF_ERROR(ctx.check_axis(make_message("attribute '", name, "'"), axis, rank));
  if (ctx.attrs().has(name)) ctx.node().attrs.set(name, axis);
  return Status::ok();
}

// A constant int input as a vector (nullopt when not constant); errors when it is not 1-D integers.
Result<std::optional<Ints>> constant_ints(NodeImportContext& ctx, int index, const char* name) {
  const Tensor* constant = ctx.constant_input(index);
  if (constant == nullptr) return std::optional<Ints>();
  if (constant->rank() != 1 || (constant->dtype() != DType::kI64 && constant->dtype() != DType::kI32)) {
    return ctx.invalid("input '", name, "' must be a 1-D integer tensor, got ", constant->desc().to_string());
  }
  return std::optional<Ints>(constant->to_int64_vector());
}

// Opset < 13: axes attribute -> constant input 1. Returns the axes when known.
Result<std::optional<Ints>> axes_as_input(NodeImportContext& ctx, bool required) {
  if (ctx.opset() < 13) {
    EF_ASSIGN_OR_RETURN(std::optional<Ints> axes, ctx.attrs().find_ints("axes"));
    if (!axes && required) return ctx.invalid("attribute 'axes' is required");
    ctx.keep_inputs(1);
    if (axes) ctx.set_constant_input(1, "axes", int64_vector(*axes));
    return axes;
  }
  if (required && !ctx.has_input(1)) return ctx.invalid("input 'axes' is required");
  return constant_ints(ctx, 1, "axes");
}

}  // namespace

Status import_cast(NodeImportContext& ctx) {
  EF_ASSIGN_OR_RETURN(std::optional<int64_t> to, ctx.attrs().find_int("to"));
  if (!to) return ctx.invalid("attribute 'to' is required");
  if (*to < INT32_MIN || *to > INT32_MAX || !dtype_from_onnx(static_cast<int32_t>(*to))) {
    return ctx.not_supported("Cast to ", onnx_type_name(static_cast<int32_t>(std::clamp<int64_t>(*to, -1, 1000))),
                             " is not supported");
  }
  ctx.node().attrs.set("to", *to);
  return Status::ok();
}

Status import_concat(NodeImportContext& ctx) {
  if (!ctx.attrs().has("axis")) return ctx.invalid("attribute 'axis' is required");
  return copy_axis(ctx, "axis", 0, ctx.input_rank(0));
}

Status import_split(NodeImportContext& ctx) {
  const int rank = ctx.input_rank(0);
  EF_ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().get_int("axis", 0));
  EF_RETURN_IF_ERROR(copy_axis(ctx, "axis", 0, rank));
  std::optional<Ints> split;
  if (ctx.opset() < 13) {
    EF_ASSIGN_OR_RETURN(split, ctx.attrs().find_ints("split"));
    ctx.keep_inputs(1);
    if (split) ctx.set_constant_input(1, "split", int64_vector(*split));
  } else {
    EF_ASSIGN_OR_RETURN(split, constant_ints(ctx, 1, "split"));
  }
  const std::optional<TensorDesc> input = ctx.input_desc(0);
  const int64_t dim = input ? input->shape[static_cast<size_t>(axis < 0 ? axis + rank : axis)] : -1;
  if (split) {
    if (static_cast<int>(split->size()) != ctx.output_count()) {
      return ctx.invalid("'split' has ", split->size(), " sizes for ", ctx.output_count(), " outputs");
    }
    for (int64_t s : *split) {
      if (s < 0) return ctx.invalid("'split' sizes must be non-negative, got ", ints_to_string(*split));
    }
    const int64_t total = std::accumulate(split->begin(), split->end(), int64_t{0});
    if (dim >= 0 && total != dim) return ctx.invalid("'split' sizes sum to ", total, ", the axis has ", dim);
  }
  EF_ASSIGN_OR_RETURN(std::optional<int64_t> num_outputs, ctx.attrs().find_int("num_outputs"));
  if (num_outputs) {  // opset 18: chunks of ceil(dim / n), the last one smaller
    if (ctx.has_input(1)) return ctx.invalid("'num_outputs' and input 'split' cannot both be given");
    if (*num_outputs != ctx.output_count()) {
      return ctx.invalid("attribute 'num_outputs' is ", *num_outputs, ", the node has ", ctx.output_count(),
                         " outputs");
    }
    if (dim < 0) return ctx.not_supported("'num_outputs' needs the split axis' size known at import");
    const int64_t chunk = (dim + *num_outputs - 1) / *num_outputs;
    Ints sizes;
    for (int64_t left = dim, i = 0; i < *num_outputs; ++i, left -= std::min(left, chunk)) {
      sizes.push_back(std::min(left, chunk));
    }
    ctx.set_constant_input(1, "split", int64_vector(sizes));
  }
  return Status::ok();
}

Status import_slice(NodeImportContext& ctx) {
  const int rank = ctx.input_rank(0);
  std::optional<Ints> axes;
  if (ctx.opset() < 10) {
    EF_ASSIGN_OR_RETURN(std::optional<Ints> starts, ctx.attrs().find_ints("starts"));
    EF_ASSIGN_OR_RETURN(std::optional<Ints> ends, ctx.attrs().find_ints("ends"));
    EF_ASSIGN_OR_RETURN(axes, ctx.attrs().find_ints("axes"));
    if (!starts || !ends) return ctx.invalid("attributes 'starts' and 'ends' are required");
    if (starts->size() != ends->size() || (axes && axes->size() != starts->size())) {
      return ctx.invalid("attributes 'starts', 'ends' and 'axes' must have the same length");
    }
    ctx.keep_inputs(1);
    ctx.set_constant_input(1, "starts", int64_vector(*starts));
    ctx.set_constant_input(2, "ends", int64_vector(*ends));
    if (axes) ctx.set_constant_input(3, "axes", int64_vector(*axes));
  } else {
    EF_ASSIGN_OR_RETURN(axes, constant_ints(ctx, 3, "axes"));
    EF_ASSIGN_OR_RETURN(std::optional<Ints> steps, constant_ints(ctx, 4, "steps"));
    if (steps && std::find(steps->begin(), steps->end(), 0) != steps->end()) {
      return ctx.invalid("input 'steps' must not contain 0, got ", ints_to_string(*steps));
    }
  }
  if (axes) EF_RETURN_IF_ERROR(ctx.check_axes("axes", *axes, rank));
  return Status::ok();
}

Status import_reshape(NodeImportContext& ctx) {
  EF_ASSIGN_OR_RETURN(bool allowzero, ctx.attrs().get_flag("allowzero", false));
  if (allowzero) ctx.node().attrs.set("allowzero", int64_t{1});
  EF_ASSIGN_OR_RETURN(std::optional<Ints> shape, constant_ints(ctx, 1, "shape"));
  if (!shape) return Status::ok();
  if (std::count(shape->begin(), shape->end(), -1) > 1) {
    return ctx.invalid("input 'shape' ", ints_to_string(*shape), " has more than one -1");
  }
  for (int64_t d : *shape) {
    if (d < -1) return ctx.invalid("input 'shape' ", ints_to_string(*shape), " has a dimension below -1");
  }
  if (allowzero && std::count(shape->begin(), shape->end(), 0) > 0 &&
      std::count(shape->begin(), shape->end(), -1) > 0) {
    return ctx.invalid("input 'shape' cannot hold both 0 and -1 with allowzero=1");
  }
  return Status::ok();
}

Status import_flatten(NodeImportContext& ctx) {
  EF_ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().get_int("axis", 1));
  const int rank = ctx.input_rank(0);
  const int64_t lowest = ctx.opset() >= 11 ? -rank : 0;
  if (rank >= 0 && (axis < lowest || axis > rank)) {
    return ctx.invalid("attribute 'axis' ", axis, " is out of range for rank ", rank);
  }
  if (ctx.attrs().has("axis")) ctx.node().attrs.set("axis", axis);
  return Status::ok();
}

Status import_squeeze(NodeImportContext& ctx) {
  EF_ASSIGN_OR_RETURN(std::optional<Ints> axes, axes_as_input(ctx, false));
  const std::optional<TensorDesc> input = ctx.input_desc(0);
  if (!axes || !input) return Status::ok();
  EF_RETURN_IF_ERROR(ctx.check_axes("axes", *axes, input->rank()));
  for (int64_t axis : *axes) {
    const int64_t dim = input->shape[static_cast<size_t>(axis < 0 ? axis + input->rank() : axis)];
    if (dim >= 0 && dim != 1) return ctx.invalid("cannot squeeze axis ", axis, " of size ", dim);
  }
  return Status::ok();
}

Status import_unsqueeze(NodeImportContext& ctx) {
  EF_ASSIGN_OR_RETURN(std::optional<Ints> axes, axes_as_input(ctx, true));
  const int rank = ctx.input_rank(0);
  if (!axes) return Status::ok();
  return ctx.check_axes("axes", *axes, rank < 0 ? -1 : rank + static_cast<int>(axes->size()));
}

Status import_transpose(NodeImportContext& ctx) {
  EF_ASSIGN_OR_RETURN(std::optional<Ints> perm, ctx.attrs().find_ints("perm"));
  if (!perm) return Status::ok();
  const int rank = ctx.input_rank(0);
  if (rank >= 0 && static_cast<int>(perm->size()) != rank) {
    return ctx.invalid("attribute 'perm' ", ints_to_string(*perm), " has ", perm->size(), " entries for rank ", rank);
  }
  std::vector<bool> seen(perm->size(), false);
  for (int64_t p : *perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm->size()) || seen[static_cast<size_t>(p)]) {
      return ctx.invalid("attribute 'perm' ", ints_to_string(*perm), " is not a permutation");
    }
    seen[static_cast<size_t>(p)] = true;
  }
  ctx.node().attrs.set("perm", std::move(*perm));
  return Status::ok();
}

Status import_gather(NodeImportContext& ctx) {
  return copy_axis(ctx, "axis", 0, ctx.input_rank(0));
}

Status import_pad(NodeImportContext& ctx) {
  EF_ASSIGN_OR_RETURN(std::string mode, ctx.attrs().get_string("mode", "constant"));
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    return ctx.not_supported("attribute 'mode' value '", mode, "' is not supported (constant, reflect, edge)");
  }
  if (ctx.attrs().has("mode")) ctx.node().attrs.set("mode", mode);
  std::optional<Ints> pads;
  if (ctx.opset() < 11) {
    EF_ASSIGN_OR_RETURN(pads, ctx.attrs().find_ints("pads"));
    if (!pads) return ctx.invalid("attribute 'pads' is required");
    EF_ASSIGN_OR_RETURN(float value, ctx.attrs().get_float("value", 0.0f));
    ctx.keep_inputs(1);
    ctx.set_constant_input(1, "pads", int64_vector(*pads));
    if (value != 0.0f) ctx.set_scalar_input_like(2, "value", value, 0);
  } else {
    if (ctx.has_input(3)) return ctx.not_supported("input 'axes' is not supported");
    EF_ASSIGN_OR_RETURN(pads, constant_ints(ctx, 1, "pads"));
  }
  if (!pads) return Status::ok();
  const int rank = ctx.input_rank(0);
  if (pads->size() % 2 != 0 || (rank >= 0 && static_cast<int>(pads->size()) != 2 * rank)) {
    return ctx.invalid("'pads' has ", pads->size(), " values for an input of rank ", rank, " (2 per axis)");
  }
  for (int64_t p : *pads) {
    if (p < -kMaxSpatialAttribute || p > kMaxSpatialAttribute) return ctx.invalid("'pads' value ", p, " is too large");
  }
  return Status::ok();
}

Status import_shape(NodeImportContext& ctx) {
  // Opset 15: output dims[start:end], negative values counting from the end, clamped to the rank.
  EF_ASSIGN_OR_RETURN(std::optional<int64_t> start, ctx.attrs().find_int("start"));
  EF_ASSIGN_OR_RETURN(std::optional<int64_t> end, ctx.attrs().find_int("end"));
  if (start) ctx.node().attrs.set("start", *start);
  if (end) ctx.node().attrs.set("end", *end);
  return Status::ok();
}

Status import_constant_of_shape(NodeImportContext& ctx) {
  EF_ASSIGN_OR_RETURN(std::optional<Tensor> value, ctx.attrs().find_tensor("value"));
  if (value) {
    if (value->numel() != 1) return ctx.invalid("attribute 'value' must hold one element, got ", value->numel());
    ctx.node().attrs.set("value", std::move(*value));
  }
  EF_ASSIGN_OR_RETURN(std::optional<Ints> shape, constant_ints(ctx, 0, "input"));
  if (shape) {
    Status valid = validate_shape(*shape, value ? dtype_size(value->dtype()) : sizeof(float));
    if (!valid.is_ok()) return ctx.invalid("input shape: ", valid.message());
  }
  return Status::ok();
}

// Inference-time Dropout is the identity.
Status import_dropout(NodeImportContext& ctx) {
  ctx.attrs().ignore("ratio");
  ctx.attrs().ignore("seed");
  if (ctx.output_count() > 1) return ctx.not_supported("the 'mask' output is not supported");
  if (ctx.has_input(2)) {
    const Tensor* training = ctx.constant_input(2);
    if (training == nullptr) return ctx.not_supported("a non-constant 'training_mode' input is not supported");
    if (training->numel() != 1 || training->dtype() != DType::kBool) {
      return ctx.invalid("input 'training_mode' must be a bool scalar");
    }
    if (training->int_at(0) != 0) return ctx.not_supported("training_mode=true is not supported");
  }
  ctx.keep_inputs(1);
  return Status::ok();
}

}  // namespace edgefuse
