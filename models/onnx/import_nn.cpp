// Convolutions, dense algebra, normalisation and pooling.
#include <algorithm>

#include "models/onnx/op_importers.h"

namespace edgefuse {

namespace {

using Ints = std::vector<int64_t>;

Status check_range(NodeImportContext& ctx, const char* name, const Ints& values, int64_t lo, int64_t hi) {
  for (int64_t v : values) {
    if (v < lo || v > hi) {
      if (lo == 1 && v < 1) return ctx.invalid("attribute '", name, "' must be positive, got ", ints_to_string(values));
      if (lo == 0 && v < 0) {
        return ctx.invalid("attribute '", name, "' must be non-negative, got ", ints_to_string(values));
      }
      return ctx.invalid("attribute '", name, "' value ", v, " is too large (limit ", hi, ")");
    }
  }
  return Status::ok();
}

// Checks a list attribute has `expected` entries, or fixes the spatial rank when still unknown.
Status check_length(NodeImportContext& ctx, const char* name, const Ints& values, int per_axis, int& spatial_rank) {
  const auto length = static_cast<int>(values.size());
  if (spatial_rank < 0) {
    if (length % per_axis != 0) return ctx.invalid("attribute '", name, "' has odd length ", length);
    spatial_rank = length / per_axis;
  }
  if (length != per_axis * spatial_rank) {
    return ctx.invalid("attribute '", name, "' has ", length, " values, expected ", per_axis * spatial_rank, " for ",
                       spatial_rank, " spatial axes");
  }
  return Status::ok();
}

// Reads a per-axis list attribute, validates length and range, and copies it to the IR node.
Status copy_window_list(NodeImportContext& ctx, const char* name, int per_axis, int64_t lo, int& spatial_rank,
                        Ints* out = nullptr) {
  EF_ASSIGN_OR_RETURN(std::optional<Ints> values, ctx.attrs().find_ints(name));
  if (!values) return Status::ok();
  EF_RETURN_IF_ERROR(check_range(ctx, name, *values, lo, kMaxSpatialAttribute));
  EF_RETURN_IF_ERROR(check_length(ctx, name, *values, per_axis, spatial_rank));
  if (out != nullptr) *out = *values;
  ctx.node().attrs.set(name, std::move(*values));
  return Status::ok();
}

struct WindowSpec {
  bool kernel_required = false;
  bool dilations = true;
};

// The attributes convolutions and pools share: auto_pad, kernel_shape, strides, dilations, pads.
// `spatial_rank` is the number of spatial axes when known from the inputs, else -1.
Status import_window(NodeImportContext& ctx, int spatial_rank, const WindowSpec& spec, Ints* kernel_shape) {
  EF_ASSIGN_OR_RETURN(std::string auto_pad, ctx.attrs().get_string("auto_pad", "NOTSET"));
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID") {
    return ctx.invalid("attribute 'auto_pad' must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '", auto_pad, "'");
  }
  if (ctx.attrs().has("auto_pad")) ctx.node().attrs.set("auto_pad", auto_pad);
  if (spec.kernel_required && !ctx.attrs().has("kernel_shape"))
    return ctx.invalid("attribute 'kernel_shape' is required");
  EF_RETURN_IF_ERROR(copy_window_list(ctx, "kernel_shape", 1, 1, spatial_rank, kernel_shape));
  EF_RETURN_IF_ERROR(copy_window_list(ctx, "strides", 1, 1, spatial_rank));
  if (spec.dilations) EF_RETURN_IF_ERROR(copy_window_list(ctx, "dilations", 1, 1, spatial_rank));
  Ints pads;
  EF_RETURN_IF_ERROR(copy_window_list(ctx, "pads", 2, 0, spatial_rank, &pads));
  const bool any_pad = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; });
  if (auto_pad != "NOTSET" && any_pad) return ctx.invalid("attributes 'pads' and auto_pad=", auto_pad, " conflict");
  return Status::ok();
}

Status check_input_rank_at_least(NodeImportContext& ctx, int index, const char* what, int min_rank) {
  const int rank = ctx.input_rank(index);
  if (rank >= 0 && rank < min_rank) return ctx.invalid(what, " must have rank >= ", min_rank, ", got rank ", rank);
  return Status::ok();
}

// Conv and ConvTranspose: group and the weight's shape against the attributes.
Status import_conv_common(NodeImportContext& ctx, Ints& kernel_shape, int& spatial_rank) {
  EF_RETURN_IF_ERROR(check_input_rank_at_least(ctx, 0, "input X", 3));
  EF_RETURN_IF_ERROR(check_input_rank_at_least(ctx, 1, "weight W", 3));
  const std::optional<TensorDesc> weight = ctx.input_desc(1);
  spatial_rank = weight ? weight->rank() - 2 : (ctx.input_rank(0) >= 0 ? ctx.input_rank(0) - 2 : -1);
  EF_RETURN_IF_ERROR(import_window(ctx, spatial_rank, WindowSpec{}, &kernel_shape));
  if (weight && !kernel_shape.empty()) {
    for (size_t i = 0; i < kernel_shape.size(); ++i) {
      const int64_t dim = weight->shape[i + 2];
      if (dim >= 0 && dim != kernel_shape[i]) {
        return ctx.invalid("attribute 'kernel_shape' ", ints_to_string(kernel_shape), " does not match weight shape ",
                           shape_to_string(weight->shape));
      }
    }
  }
  EF_ASSIGN_OR_RETURN(int64_t group, ctx.attrs().get_int("group", 1));
  if (group < 1 || group > (int64_t{1} << 24)) return ctx.invalid("attribute 'group' must be >= 1, got ", group);
  if (ctx.attrs().has("group")) ctx.node().attrs.set("group", group);
  return Status::ok();
}

}  // namespace

Status import_conv(NodeImportContext& ctx) {
  Ints kernel_shape;
  int spatial_rank = -1;
  EF_RETURN_IF_ERROR(import_conv_common(ctx, kernel_shape, spatial_rank));
  const int64_t group = ctx.node().attrs.get_int("group", 1);
  const std::optional<TensorDesc> x = ctx.input_desc(0);
  const std::optional<TensorDesc> w = ctx.input_desc(1);
  if (x && w && x->rank() == w->rank()) {
    const int64_t channels = x->shape[1];
    const int64_t weight_channels = w->shape[1];
    if (channels >= 0 && weight_channels >= 0 && channels != weight_channels * group) {
      return ctx.invalid("input has ", channels, " channels, weight ", shape_to_string(w->shape), " with group ", group,
                         " expects ", weight_channels * group);
    }
  } else if (x && w && x->rank() != w->rank()) {
    return ctx.invalid("input ", x->to_string(), " and weight ", w->to_string(), " ranks differ");
  }
  if (w && w->shape[0] >= 0 && w->shape[0] % group != 0) {
    return ctx.invalid("weight has ", w->shape[0], " output channels, not a multiple of group ", group);
  }
  return Status::ok();
}

Status import_conv_transpose(NodeImportContext& ctx) {
  Ints kernel_shape;
  int spatial_rank = -1;
  EF_RETURN_IF_ERROR(import_conv_common(ctx, kernel_shape, spatial_rank));
  EF_RETURN_IF_ERROR(copy_window_list(ctx, "output_padding", 1, 0, spatial_rank));
  EF_ASSIGN_OR_RETURN(std::optional<Ints> output_shape, ctx.attrs().find_ints("output_shape"));
  if (output_shape) {
    EF_RETURN_IF_ERROR(check_range(ctx, "output_shape", *output_shape, 1, kMaxSpatialAttribute));
    ctx.node().attrs.set("output_shape", std::move(*output_shape));
  }
  return Status::ok();
}

Status import_matmul(NodeImportContext& ctx) {
  EF_RETURN_IF_ERROR(check_input_rank_at_least(ctx, 0, "input A", 1));
  return check_input_rank_at_least(ctx, 1, "input B", 1);
}

Status import_gemm(NodeImportContext& ctx) {
  for (int i = 0; i < 2; ++i) {
    const int rank = ctx.input_rank(i);
    if (rank >= 0 && rank != 2) return ctx.invalid("input ", i, " must have rank 2, got ", rank);
  }
  AttributeReader& attrs = ctx.attrs();
  for (const char* name : {"alpha", "beta"}) {
    EF_ASSIGN_OR_RETURN(std::optional<float> value, attrs.find_float(name));
    if (value) ctx.node().attrs.set(name, *value);
  }
  for (const char* name : {"transA", "transB"}) {
    EF_ASSIGN_OR_RETURN(bool value, attrs.get_flag(name, false));
    if (attrs.has(name)) ctx.node().attrs.set(name, int64_t{value});
  }
  return Status::ok();
}

Status import_batch_normalization(NodeImportContext& ctx) {
  AttributeReader& attrs = ctx.attrs();
  EF_ASSIGN_OR_RETURN(std::optional<float> epsilon, attrs.find_float("epsilon"));
  if (epsilon) {
    if (!(*epsilon >= 0.0f)) return ctx.invalid("attribute 'epsilon' must be >= 0, got ", *epsilon);
    ctx.node().attrs.set("epsilon", *epsilon);
  }
  attrs.ignore("momentum");  // only updates running statistics in training
  EF_ASSIGN_OR_RETURN(bool spatial, attrs.get_flag("spatial", true));
  if (!spatial) return ctx.not_supported("spatial=0 (per-activation statistics) is not supported");
  EF_ASSIGN_OR_RETURN(bool training, attrs.get_flag("training_mode", false));
  if (training) return ctx.not_supported("training_mode=1 is not supported");
  if (ctx.output_count() > 1) return ctx.not_supported("training outputs (running mean/variance) are not supported");
  return check_input_rank_at_least(ctx, 0, "input X", 2);
}

Status import_max_pool(NodeImportContext& ctx) {
  EF_RETURN_IF_ERROR(check_input_rank_at_least(ctx, 0, "input X", 3));
  const int rank = ctx.input_rank(0);
  EF_RETURN_IF_ERROR(import_window(ctx, rank >= 0 ? rank - 2 : -1, WindowSpec{.kernel_required = true}, nullptr));
  EF_ASSIGN_OR_RETURN(bool ceil_mode, ctx.attrs().get_flag("ceil_mode", false));
  if (ctx.attrs().has("ceil_mode")) ctx.node().attrs.set("ceil_mode", int64_t{ceil_mode});
  EF_ASSIGN_OR_RETURN(bool column_major, ctx.attrs().get_flag("storage_order", false));
  if (column_major) ctx.node().attrs.set("storage_order", int64_t{1});  // only affects the Indices output
  return Status::ok();
}

Status import_average_pool(NodeImportContext& ctx) {
  EF_RETURN_IF_ERROR(check_input_rank_at_least(ctx, 0, "input X", 3));
  const int rank = ctx.input_rank(0);
  const WindowSpec spec{.kernel_required = true, .dilations = false};
  EF_RETURN_IF_ERROR(import_window(ctx, rank >= 0 ? rank - 2 : -1, spec, nullptr));
  for (const char* name : {"ceil_mode", "count_include_pad"}) {
    EF_ASSIGN_OR_RETURN(bool value, ctx.attrs().get_flag(name, false));
    if (ctx.attrs().has(name)) ctx.node().attrs.set(name, int64_t{value});
  }
  return Status::ok();
}

Status import_global_average_pool(NodeImportContext& ctx) {
  return check_input_rank_at_least(ctx, 0, "input X", 3);
}

}  // namespace edgefuse
